// plexity_plugins.runtime._native: the scorer's hot path in one compiled module.
//
// Each function here is a port of a Python function in plexity_plugins and must give
// exactly its result (tests/test_native.py compares them on the development pages and
// on random Unicode text):
//
//   split(text, max_chars)        sentences.split_sentences + sentences.block_ids
//   Model.score_spans(text, spans) tokenizer.spans_to_lm_lines + kenlm.Model.score
//   keep_region / keep_trim        decide.keep_region_python / decide.keep_trim_python
//   LangidWalker.visit_counts(b)   py3langid.langid.visit_counts
//   LangidWalker.features(b, t)    the inputs of py3langid's _sparse_score (half->float exact)
//   WordCounter.count(text)        language._function_word_share's counting
//   sample_lines(text, limit)      language.sample_for_identification
//   utf8_text(data)                str(data, "utf-8"), keeping the UTF-8 form (None if invalid)
//   has_utf8_form(text)            whether a str holds its UTF-8 form (then it has no lone surrogate)
//   page_units, page_text          a str as its code units and back (the extraction child's pages)
//   collapse_lines, count_words,   extractors.text.lines_python, words_python, nonspace_python,
//   count_nonspace, count_marked_words  marked_words_python
//   find_all(text, needle, limit)  extractors.text.find_all_python (str.find, again and again)
//   markup_depth, flatten_markup   extractors.nesting.markup_depth_python, flatten_markup_python
//   read_markup                    extractors.markup.read_markup_python
//   segment_html, LearnedPage,     the learned reader (extractors/learned/): in native/learned_reader.cpp
//   Forest, unescape_html
//
// Character classes use CPython's own Unicode tables (Py_UNICODE_IS*), the ones the
// `re` module uses for \w, \s and \d, so tokens match the regular expressions exactly.
// KenLM is compiled in from its sources (native/third_party/kenlm, LGPL-2.1); scores are summed in
// single precision like kenlm's Python module (lm::base::ScoreSentence).

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "gil_release.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <pthread.h>  // (pthread_atfork)

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lm/model.hh"
#include "lm/state.hh"
#include "lm/virtual_interface.hh"

namespace {

// ---------------------------------------------------------------------------------------
// Unicode text access

struct UText {
  int kind;
  const void *data;
  Py_ssize_t length;

  explicit UText(PyObject *str)
      : kind(PyUnicode_KIND(str)), data(PyUnicode_DATA(str)), length(PyUnicode_GET_LENGTH(str)) {}
  inline Py_UCS4 operator[](Py_ssize_t i) const { return PyUnicode_READ(kind, data, i); }
};

using plexity::GilRelease;  // (native/gil_release.h)

// re's \w for str patterns (sre: SRE_UNI_IS_WORD), with a table for ASCII.
struct AsciiTables {
  bool word[128];    // \w
  bool letter[128];  // [^\W\d_]
  AsciiTables() {
    for (int c = 0; c < 128; ++c) {
      word[c] = Py_UNICODE_ISALNUM(c) || c == '_';
      letter[c] = Py_UNICODE_ISALNUM(c) && !Py_UNICODE_ISDECIMAL(c);
    }
  }
};
const AsciiTables kAscii;
inline bool is_word(Py_UCS4 c) { return c < 128 ? kAscii.word[c] : (Py_UNICODE_ISALNUM(c) || c == '_'); }
// re's [^\W\d_] (a word character that is not a digit or underscore).
inline bool is_letter(Py_UCS4 c) {
  return c < 128 ? kAscii.letter[c] : (Py_UNICODE_ISALNUM(c) && !Py_UNICODE_ISDECIMAL(c));
}
// re's \s and str.strip()/str.isspace() (Py_UNICODE_ISSPACE).
inline bool is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }

inline void append_utf8(std::string &out, Py_UCS4 c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool parse_span(PyObject *item, Py_ssize_t length, Py_ssize_t *start, Py_ssize_t *end) {
  if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
    PyErr_SetString(PyExc_TypeError, "spans must be (start, end) tuples");
    return false;
  }
  *start = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
  *end = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 1));
  if (PyErr_Occurred()) return false;
  if (*start < 0 || *end > length || *start > *end) {
    PyErr_SetString(PyExc_ValueError, "span out of range");
    return false;
  }
  return true;
}

// (list_a, list_b) of n items each, item k from make(k) -> {a, b} (new references, or
// nullptr with a Python error set).
template <class Make>
PyObject *two_lists(Py_ssize_t n, Make make) {
  PyObject *a = PyList_New(n), *b = PyList_New(n);
  if (a == nullptr || b == nullptr) {
    Py_XDECREF(a);
    Py_XDECREF(b);
    return nullptr;
  }
  for (Py_ssize_t k = 0; k < n; ++k) {
    std::pair<PyObject *, PyObject *> items = make(k);
    if (items.first == nullptr || items.second == nullptr) {
      Py_XDECREF(items.first);
      Py_XDECREF(items.second);
      Py_DECREF(a);
      Py_DECREF(b);
      return nullptr;
    }
    PyList_SET_ITEM(a, k, items.first);
    PyList_SET_ITEM(b, k, items.second);
  }
  return Py_BuildValue("(NN)", a, b);
}

// ---------------------------------------------------------------------------------------
// Sentence splitting (sentences.split_sentences) with block ids (sentences.block_ids)

typedef int (*SentenceBreaker)(const char *in, int in_size, char *out, int *starts, int *ends, int max_out);
SentenceBreaker g_breaker = nullptr;

PyObject *set_sentence_breaker(PyObject *, PyObject *arg) {
  void *address = PyLong_AsVoidPtr(arg);
  if (address == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "null function address");
    return nullptr;
  }
  g_breaker = reinterpret_cast<SentenceBreaker>(address);
  Py_RETURN_NONE;
}

struct SpanSink {
  std::vector<std::pair<Py_ssize_t, Py_ssize_t>> spans;
  void add(Py_ssize_t a, Py_ssize_t b) { spans.emplace_back(a, b); }
};

// sentences._cut_long: pieces of at most max_chars, cut at whitespace (runs of \S).
void cut_long(const UText &t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t max_chars, SpanSink &out) {
  if (end - start <= max_chars) {
    out.add(start, end);
    return;
  }
  bool have_piece = false;
  Py_ssize_t piece_start = 0, piece_end = 0;
  Py_ssize_t i = start;
  while (i < end) {
    if (is_space(t[i])) {
      ++i;
      continue;
    }
    Py_ssize_t w_start = i;
    while (i < end && !is_space(t[i])) ++i;
    Py_ssize_t w_end = i;
    if (!have_piece) {
      have_piece = true;
      piece_start = w_start;
      piece_end = w_end;
    } else if (w_end - piece_start > max_chars) {
      out.add(piece_start, piece_end);
      piece_start = w_start;
      piece_end = w_end;
    } else {
      piece_end = w_end;
    }
    while (piece_end - piece_start > max_chars) {
      out.add(piece_start, piece_start + max_chars);
      piece_start += max_chars;
    }
  }
  if (have_piece) out.add(piece_start, piece_end);
}

// One piece (no newline inside): trimmed of whitespace, then cut if too long.
void add_piece(const UText &t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t max_chars, SpanSink &out) {
  while (start < end && is_space(t[start])) ++start;
  while (end > start && is_space(t[end - 1])) --end;
  if (start == end) return;
  if (end - start <= max_chars) {
    out.add(start, end);
  } else {
    cut_long(t, start, end, max_chars, out);
  }
}

PyObject *split(PyObject *, PyObject *args) {
  PyObject *text;
  Py_ssize_t max_chars;
  if (!PyArg_ParseTuple(args, "Un", &text, &max_chars)) return nullptr;
  if (max_chars < 1) {
    PyErr_SetString(PyExc_ValueError, "max_chars must be positive");
    return nullptr;
  }
  if (g_breaker == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "set_sentence_breaker() was not called");
    return nullptr;
  }
  const UText t(text);
  bool all_space = true;
  for (Py_ssize_t i = 0; i < t.length && all_space; ++i) all_space = is_space(t[i]);

  SpanSink sink;
  if (t.length > 0 && !all_space) {
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == nullptr) return nullptr;
    if (size > (INT32_MAX - 16) / 2) {
      PyErr_SetString(PyExc_ValueError, "text too long for the sentence breaker");
      return nullptr;
    }
    // Buffer sizes as in BlingFire's own wrapper: the C code may write that far.
    // Not zero-filled: only the part BlingFire writes is ever
    // touched, about one byte per input byte, instead of 18 bytes per input byte.
    const int capacity = static_cast<int>(size * 2 + 16);
    std::unique_ptr<char[]> out_buf(new char[capacity]);
    std::unique_ptr<int[]> starts(new int[capacity]), ends(new int[capacity]);
    GilRelease gil;  // until the end of this block: BlingFire and the spans read only buffers
    int n_out = g_breaker(utf8, static_cast<int>(size), out_buf.get(), starts.get(), ends.get(), capacity);

    std::vector<std::pair<Py_ssize_t, Py_ssize_t>> pieces;  // BlingFire spans, characters
    if (n_out <= 0 || n_out > capacity) {
      pieces.emplace_back(0, t.length);  // BlingFire declined: one piece
    } else {
      int count = 1;
      for (int i = 0; i < n_out; ++i) count += out_buf[i] == '\n';
      if (count > capacity) count = capacity;  // cannot happen (output ~ input size); bounds the reads
      const bool ascii = PyUnicode_IS_ASCII(text);
      // Byte offsets to character offsets: count UTF-8 lead bytes, left to right.
      Py_ssize_t byte_pos = 0, char_pos = 0;
      for (int k = 0; k < count; ++k) {
        Py_ssize_t b_start = starts[k], b_end = static_cast<Py_ssize_t>(ends[k]) + 1;
        if (b_start < byte_pos || b_end < b_start || b_end > size) {
          // Offsets out of order or range (not seen from BlingFire): never read past the text.
          pieces.clear();
          pieces.emplace_back(0, t.length);
          break;
        }
        if (ascii) {
          pieces.emplace_back(b_start, b_end);
          byte_pos = b_end;
          continue;
        }
        for (Py_ssize_t b = byte_pos; b < b_start; ++b) char_pos += (utf8[b] & 0xC0) != 0x80;
        Py_ssize_t c_start = char_pos;
        for (Py_ssize_t b = b_start; b < b_end; ++b) char_pos += (utf8[b] & 0xC0) != 0x80;
        pieces.emplace_back(c_start, char_pos);
        byte_pos = b_end;
      }
    }
    for (const auto &piece : pieces) {
      // Every newline is a hard boundary: cut the BlingFire span into its lines.
      Py_ssize_t line_start = piece.first;
      for (Py_ssize_t i = piece.first; i <= piece.second; ++i) {
        if (i == piece.second || t[i] == '\n') {
          if (i > line_start) add_piece(t, line_start, i, max_chars, sink);
          line_start = i + 1;
        }
      }
    }
  }

  // sentences.block_ids: a new block wherever a newline lies between two sentences.
  std::vector<long> block_ids(sink.spans.size());
  long block = -1;
  Py_ssize_t prev_end = 0;
  for (size_t k = 0; k < sink.spans.size(); ++k) {
    bool new_block = block < 0;
    for (Py_ssize_t i = prev_end; i < sink.spans[k].first && !new_block; ++i) new_block = t[i] == '\n';
    if (new_block) ++block;
    block_ids[k] = block;
    prev_end = sink.spans[k].second;
  }
  return two_lists(static_cast<Py_ssize_t>(sink.spans.size()), [&](Py_ssize_t k) {
    return std::make_pair(Py_BuildValue("(nn)", sink.spans[k].first, sink.spans[k].second),
                          PyLong_FromLong(block_ids[k]));
  });
}

// ---------------------------------------------------------------------------------------
// Tokenising and scoring (tokenizer rules plexity-tok-1, kenlm.Model.score)

// str.istitle() of a token (CPython's unicode_istitle_impl).
bool is_title(const std::u32string &token) {
  bool cased = false, previous_is_cased = false;
  for (Py_UCS4 c : token) {
    if (Py_UNICODE_ISUPPER(c) || Py_UNICODE_ISTITLE(c)) {
      if (previous_is_cased) return false;
      previous_is_cased = true;
      cased = true;
    } else if (Py_UNICODE_ISLOWER(c)) {
      if (!previous_is_cased) return false;
      previous_is_cased = true;
      cased = true;
    } else {
      previous_is_cased = false;
    }
  }
  return cased;
}

// Tokenises one sentence and scores it with a model of type M (a concrete KenLM model
// class, so that its lookups inline, or VirtualModel for any other model).
class Scorer {
 public:
  virtual ~Scorer() {}
  // log10 P(tokens of text[start:end] </s> | <s>) and the number of tokens; false with a
  // Python error set if lower-casing the first token failed.  Called without the GIL:
  // `gil` takes it back when Python must lower-case a token.
  virtual bool score(const UText &t, Py_ssize_t start, Py_ssize_t end, float *logprob, long *tokens,
                     GilRelease &gil) = 0;

 protected:
  // Calls word(utf8 token) for each token of text[start:end] (rules 2-4 of the tokenizer);
  // false with a Python error set if lower-casing failed.
  template <class OnWord>
  bool tokens(const UText &t, Py_ssize_t start, Py_ssize_t end, OnWord word, long *count, GilRelease &gil) {
    // Scratch space per call, not per scorer: other threads score with the same model.
    std::string token_utf8;
    long n = 0;
    Py_ssize_t i = start;
    while (i < end) {
      Py_UCS4 c = t[i];
      if (is_space(c)) {
        ++i;
        continue;
      }
      Py_ssize_t token_end = i + 1;
      if (is_word(c)) {
        while (token_end < end && is_word(t[token_end])) ++token_end;
      }
      token_utf8.clear();
      bool has_upper = false;
      for (Py_ssize_t k = i; k < token_end; ++k) {
        Py_UCS4 ch = t[k];
        if (ch >= '1' && ch <= '9') ch = '0';  // rule 2: ASCII digits become 0
        if (n == 0 && (Py_UNICODE_ISUPPER(ch) || Py_UNICODE_ISTITLE(ch))) has_upper = true;
        append_utf8(token_utf8, ch);
      }
      if (n == 0 && has_upper && !lower_if_title(i, token_end, t, token_utf8, gil)) return false;
      word(StringPiece(token_utf8.data(), token_utf8.size()));
      ++n;
      i = token_end;
    }
    *count = n;
    return true;
  }

 private:
  // Rule 4: a title-case first token is lower-cased as str.lower() does: A-Z to a-z for an
  // ASCII token, else by str.lower() itself (full case mapping, final sigma), so the
  // result is exactly Python's.
  static bool lower_if_title(Py_ssize_t start, Py_ssize_t end, const UText &t, std::string &token_utf8,
                             GilRelease &gil) {
    std::u32string chars;
    bool ascii = true;
    for (Py_ssize_t k = start; k < end; ++k) {
      Py_UCS4 ch = t[k];
      chars.push_back(ch >= '1' && ch <= '9' ? '0' : ch);
      ascii = ascii && ch < 128;
    }
    if (!is_title(chars)) return true;
    if (ascii) {
      for (char &c : token_utf8) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      return true;
    }
    return gil.with_gil([&] { return python_lower(chars, token_utf8); });
  }

  static bool python_lower(const std::u32string &chars, std::string &token_utf8) {
    PyObject *token = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars.data(),
                                                static_cast<Py_ssize_t>(chars.size()));
    if (token == nullptr) return false;
    PyObject *lowered = PyObject_CallMethod(token, "lower", nullptr);
    Py_DECREF(token);
    if (lowered == nullptr) return false;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(lowered, &size);
    if (utf8 == nullptr) {
      Py_DECREF(lowered);
      return false;
    }
    token_utf8.assign(utf8, size);
    Py_DECREF(lowered);
    return true;
  }
};

// Sums in single precision, like kenlm's Python module (lm::base::ScoreSentence).
template <class M>
class TypedScorer : public Scorer {
 public:
  explicit TypedScorer(const M &model) : model_(model), vocab_(model.GetVocabulary()), id_(next_id()) {}

  bool score(const UText &t, Py_ssize_t start, Py_ssize_t end, float *logprob, long *count,
             GilRelease &gil) override {
    // Two passes: the vocabulary lookups of all tokens first (independent of each other,
    // so the CPU overlaps their cache misses), then the n-gram lookups.  (thread_local:
    // threads score at the same time, without the GIL.)
    thread_local std::vector<lm::WordIndex> ids;
    ids.clear();
    VocabSlot *cache = vocab_cache();
    auto on_word = [&](const StringPiece &word) { ids.push_back(index(word, cache)); };
    if (!tokens(t, start, end, on_word, count, gil)) return false;
    ids.push_back(vocab_.EndSentence());
    lm::ngram::State state_vec[2];
    lm::ngram::State *state = &state_vec[0], *next = &state_vec[1];
    *state = model_.BeginSentenceState();
    float total = 0.0f;
    for (lm::WordIndex id : ids) {
      total += model_.FullScore(*state, id, *next).prob;
      std::swap(state, next);
    }
    *logprob = total;
    return true;
  }

 private:
  // KenLM's vocabularies map a word to its index through the word's 64-bit hash alone
  // (lm::ngram::detail::HashForVocab, then a search of a sorted or probing table of
  // hashes), so remembering hash -> index gives exactly their answer; frequent words
  // ("the", "of") then skip the search and its cache misses.  Direct-mapped, one per
  // thread (threads score without the GIL), for the scorer that used it last.
  struct VocabSlot {
    uint64_t hash = 0;
    lm::WordIndex index = 0;
    bool filled = false;
  };
  static constexpr size_t kVocabCacheSize = 4096;  // a power of two

  struct VocabCache {
    uint64_t owner = 0;  // id_ of the scorer whose indices it holds (ids are never reused)
    std::vector<VocabSlot> slots;
  };

  static uint64_t next_id() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }

  VocabSlot *vocab_cache() {
    thread_local VocabCache cache;
    if (cache.owner != id_) {
      cache.slots.assign(kVocabCacheSize, VocabSlot());
      cache.owner = id_;
    }
    return cache.slots.data();
  }

  lm::WordIndex index(const StringPiece &word, VocabSlot *cache) {
    const uint64_t hash = lm::ngram::detail::HashForVocab(word);
    VocabSlot &slot = cache[hash & (kVocabCacheSize - 1)];
    if (slot.filled && slot.hash == hash) return slot.index;
    slot.index = vocab_.Index(word);
    slot.hash = hash;
    slot.filled = true;
    return slot.index;
  }

  const M &model_;
  const typename M::Vocabulary &vocab_;
  const uint64_t id_;
};

class VirtualScorer : public Scorer {
 public:
  explicit VirtualScorer(const lm::base::Model &model) : model_(model), vocab_(model.BaseVocabulary()) {}

  bool score(const UText &t, Py_ssize_t start, Py_ssize_t end, float *logprob, long *count,
             GilRelease &gil) override {
    lm::ngram::State state_vec[2];
    lm::ngram::State *state = &state_vec[0], *next = &state_vec[1];
    model_.BeginSentenceWrite(state);
    float total = 0.0f;
    auto on_word = [&](const StringPiece &word) {
      total += model_.BaseScore(state, vocab_.Index(word), next);
      std::swap(state, next);
    };
    if (!tokens(t, start, end, on_word, count, gil)) return false;
    total += model_.BaseScore(state, vocab_.EndSentence(), next);
    *logprob = total;
    return true;
  }

 private:
  const lm::base::Model &model_;
  const lm::base::Vocabulary &vocab_;
};

template <class M>
Scorer *typed_scorer(lm::base::Model *model) {
  const M *typed = dynamic_cast<const M *>(model);
  return typed == nullptr ? nullptr : new TypedScorer<M>(*typed);
}

Scorer *make_scorer(lm::base::Model *model) {
  using namespace lm::ngram;
  Scorer *scorer = nullptr;
  if (!(scorer = typed_scorer<QuantTrieModel>(model)) && !(scorer = typed_scorer<TrieModel>(model)) &&
      !(scorer = typed_scorer<ProbingModel>(model)) && !(scorer = typed_scorer<RestProbingModel>(model)) &&
      !(scorer = typed_scorer<ArrayTrieModel>(model)) && !(scorer = typed_scorer<QuantArrayTrieModel>(model))) {
    scorer = new VirtualScorer(*model);
  }
  return scorer;
}

struct ModelObject {
  PyObject_HEAD
  lm::base::Model *model;
  Scorer *scorer;
};

void Model_dealloc(ModelObject *self) {
  delete self->scorer;
  delete self->model;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

int Model_init(ModelObject *self, PyObject *args, PyObject *) {
  const char *path;
  if (!PyArg_ParseTuple(args, "s", &path)) return -1;
  lm::ngram::Config config;
  config.load_method = util::POPULATE_OR_LAZY;  // mmap: worker processes share the pages
  config.messages = nullptr;
  try {
    lm::base::Model *model = lm::ngram::LoadVirtual(path, config);
    delete self->scorer;
    delete self->model;
    self->model = model;
    self->scorer = make_scorer(model);
  } catch (const std::exception &e) {
    PyErr_Format(PyExc_OSError, "Cannot read model '%s' (%s)", path, e.what());
    return -1;
  }
  return 0;
}

PyObject *results(const std::vector<float> &logprobs, const std::vector<long> &counts) {
  return two_lists(static_cast<Py_ssize_t>(logprobs.size()), [&](Py_ssize_t k) {
    return std::make_pair(PyFloat_FromDouble(logprobs[k]), PyLong_FromLong(counts[k]));
  });
}

// Tokenizer rule 1 (NFKC) for text[start:end]: a new reference to normalize(text[start:end])
// in *normalized, or nullptr there when the span is ASCII (NFKC already) or normalize is
// None; false with a Python error set if normalize failed.
bool normalize_span(PyObject *text, const UText &t, Py_ssize_t start, Py_ssize_t end, PyObject *normalize,
                    PyObject **normalized) {
  *normalized = nullptr;
  if (normalize == nullptr) return true;
  bool ascii = true;
  for (Py_ssize_t i = start; i < end && ascii; ++i) ascii = t[i] < 128;
  if (ascii) return true;
  PyObject *piece = PyUnicode_Substring(text, start, end);
  if (piece == nullptr) return false;
  PyObject *result = PyObject_CallOneArg(normalize, piece);
  Py_DECREF(piece);
  if (result == nullptr) return false;
  if (!PyUnicode_Check(result)) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_TypeError, "normalize must return str");
    return false;
  }
  *normalized = result;
  return true;
}

PyObject *Model_score_spans(ModelObject *self, PyObject *args) {
  PyObject *text, *spans, *normalize = Py_None;
  if (!PyArg_ParseTuple(args, "UO!|O", &text, &PyList_Type, &spans, &normalize)) return nullptr;
  if (self->scorer == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "model not loaded");
    return nullptr;
  }
  if (normalize == Py_None) {
    normalize = nullptr;
  } else if (!PyCallable_Check(normalize)) {
    PyErr_SetString(PyExc_TypeError, "normalize must be callable or None");
    return nullptr;
  }
  const UText t(text);
  const Py_ssize_t n = PyList_GET_SIZE(spans);
  std::vector<std::pair<Py_ssize_t, Py_ssize_t>> bounds(n);
  // With the GIL: read the spans, and normalise the non-ASCII sentences (new references,
  // released on every way out).
  std::vector<PyObject *> normalized(n, nullptr);
  struct Release {
    std::vector<PyObject *> &objects;
    ~Release() {
      for (PyObject *o : objects) Py_XDECREF(o);
    }
  } release{normalized};
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (!parse_span(PyList_GET_ITEM(spans, k), t.length, &bounds[k].first, &bounds[k].second)) return nullptr;
    if (!normalize_span(text, t, bounds[k].first, bounds[k].second, normalize, &normalized[k])) return nullptr;
  }
  std::vector<float> logprobs(n);
  std::vector<long> counts(n);
  bool ok = true;
  {
    GilRelease gil;
    for (Py_ssize_t k = 0; k < n && ok; ++k) {
      if (normalized[k] != nullptr) {
        const UText u(normalized[k]);
        ok = self->scorer->score(u, 0, u.length, &logprobs[k], &counts[k], gil);
      } else {
        ok = self->scorer->score(t, bounds[k].first, bounds[k].second, &logprobs[k], &counts[k], gil);
      }
    }
  }
  if (!ok) return nullptr;
  return results(logprobs, counts);
}

PyObject *Model_get_order(ModelObject *self, void *) {
  if (self->model == nullptr) Py_RETURN_NONE;
  return PyLong_FromLong(self->model->Order());
}

PyMethodDef Model_methods[] = {
    {"score_spans", reinterpret_cast<PyCFunction>(Model_score_spans), METH_VARARGS,
     "score_spans(text, spans, normalize=None) -> (log10 probabilities, token counts): each\n"
     "span, passed through normalize(str) -> str unless it is ASCII (rule 1 of the tokenizer,\n"
     "NFKC), tokenised (rules 2-4) and scored as a sentence."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef Model_getset[] = {{"order", reinterpret_cast<getter>(Model_get_order), nullptr, "n-gram order", nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject ModelType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---------------------------------------------------------------------------------------
// Which sentences to keep (decide.keep_region, decide.keep_trim): same arithmetic, in the
// same order, in double precision, with libm's pow/log10 as Python's float ** and math.log10

struct Blocks {
  std::vector<long> ids;
  std::vector<double> ppl;
  std::vector<long> count;
};

// decide._blocks: per block, pooled perplexity and token count (sentence ends included).
bool read_blocks(PyObject *ids, PyObject *logprobs, PyObject *tokens, Blocks &out) {
  if (!PyList_Check(ids) || !PyList_Check(logprobs) || !PyList_Check(tokens)) {
    PyErr_SetString(PyExc_TypeError, "ids, logprobs and tokens must be lists");
    return false;
  }
  const Py_ssize_t n = PyList_GET_SIZE(ids);
  if (PyList_GET_SIZE(logprobs) != n || PyList_GET_SIZE(tokens) != n) {
    PyErr_SetString(PyExc_ValueError, "ids, logprobs and tokens differ in length");
    return false;
  }
  out.ids.resize(n);
  const long n_blocks = n ? PyLong_AsLong(PyList_GET_ITEM(ids, n - 1)) + 1 : 0;
  if (PyErr_Occurred()) return false;
  std::vector<double> lp(n_blocks > 0 ? n_blocks : 0, 0.0);
  out.count.assign(lp.size(), 0);
  for (Py_ssize_t k = 0; k < n; ++k) {
    const long block = PyLong_AsLong(PyList_GET_ITEM(ids, k));
    const double logprob = PyFloat_AsDouble(PyList_GET_ITEM(logprobs, k));
    const long tokens_k = PyLong_AsLong(PyList_GET_ITEM(tokens, k));
    if (PyErr_Occurred()) return false;
    if (block < 0 || block >= n_blocks) {
      PyErr_SetString(PyExc_ValueError, "block ids must lie in [0, last id]");
      return false;
    }
    out.ids[k] = block;
    lp[block] += logprob;
    out.count[block] += tokens_k + 1;
  }
  out.ppl.resize(lp.size());
  for (size_t b = 0; b < lp.size(); ++b) {
    if (out.count[b] == 0) {
      PyErr_SetString(PyExc_ValueError, "a block without sentences");
      return false;
    }
    out.ppl[b] = std::pow(10.0, -lp[b] / static_cast<double>(out.count[b]));
  }
  return true;
}

PyObject *keep_list(const Blocks &blocks, const std::vector<char> &kept_blocks) {
  PyObject *keep = PyList_New(static_cast<Py_ssize_t>(blocks.ids.size()));
  if (keep == nullptr) return nullptr;
  for (size_t k = 0; k < blocks.ids.size(); ++k) {
    PyObject *value = kept_blocks[blocks.ids[k]] ? Py_True : Py_False;
    Py_INCREF(value);
    PyList_SET_ITEM(keep, k, value);
  }
  return keep;
}

PyObject *keep_region(PyObject *, PyObject *args) {
  PyObject *ids, *logprobs, *tokens;
  double threshold;
  long negative_cap, short_block;
  if (!PyArg_ParseTuple(args, "OOOdll", &ids, &logprobs, &tokens, &threshold, &negative_cap, &short_block))
    return nullptr;
  Blocks blocks;
  if (!read_blocks(ids, logprobs, tokens, blocks)) return nullptr;
  const size_t n_blocks = blocks.ppl.size();
  const double log_t = std::log10(threshold);
  // decide._max_region: Kadane's maximum-sum run of block weights.
  double best = 0.0, running = 0.0;
  long first = -1, last = -1, start = 0;
  for (size_t b = 0; b < n_blocks; ++b) {
    const double margin = log_t - std::log10(blocks.ppl[b]);
    const long n = blocks.count[b];
    const double w = margin > 0 ? static_cast<double>(n) * margin
                                : static_cast<double>(n < negative_cap ? n : negative_cap) * margin;
    if (running <= 0) {
      running = w;
      start = static_cast<long>(b);
    } else {
      running += w;
    }
    if (running > best) {
      best = running;
      first = start;
      last = static_cast<long>(b);
    }
  }
  std::vector<char> kept_blocks(n_blocks, 0);
  for (long b = first; first >= 0 && b <= last; ++b) {
    kept_blocks[b] = !(blocks.ppl[b] > threshold && blocks.count[b] < short_block);
  }
  return keep_list(blocks, kept_blocks);
}

PyObject *keep_trim(PyObject *, PyObject *args) {
  PyObject *ids, *logprobs, *tokens;
  double threshold, relative;
  long max_tokens;
  if (!PyArg_ParseTuple(args, "OOOdld", &ids, &logprobs, &tokens, &threshold, &max_tokens, &relative))
    return nullptr;
  Blocks blocks;
  if (!read_blocks(ids, logprobs, tokens, blocks)) return nullptr;
  const long n_blocks = static_cast<long>(blocks.ppl.size());
  // decide.trim_limit: the threshold, or `relative` times the page's lower median block
  // perplexity (statistics.median_low), if that is higher.
  double limit = threshold;
  if (n_blocks > 0) {
    std::vector<double> sorted(blocks.ppl);
    std::nth_element(sorted.begin(), sorted.begin() + (n_blocks - 1) / 2, sorted.end());
    const double median = sorted[(n_blocks - 1) / 2];
    if (relative * median > limit) limit = relative * median;
  }
  auto junk = [&](long b) { return blocks.ppl[b] > limit && blocks.count[b] < max_tokens; };
  long first = 0;
  while (first < n_blocks && junk(first)) ++first;
  long last = n_blocks - 1;
  while (last >= first && junk(last)) --last;
  std::vector<char> kept_blocks(n_blocks, 0);
  for (long b = first; b <= last; ++b) kept_blocks[b] = 1;
  return keep_list(blocks, kept_blocks);
}

// ---------------------------------------------------------------------------------------
// py3langid's feature extraction (visit_counts): a DFA walk over the UTF-8 bytes

struct WalkerObject {
  PyObject_HEAD
  Py_buffer nextmove;
  bool have_buffer;
  std::vector<Py_ssize_t> *rowbase;
  std::vector<long> *output;
  std::vector<long> *counts;  // scratch, all zero between calls
};

void Walker_dealloc(WalkerObject *self) {
  if (self->have_buffer) PyBuffer_Release(&self->nextmove);
  delete self->rowbase;
  delete self->output;
  delete self->counts;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

bool list_to_vector(PyObject *seq, std::vector<long> &out) {
  PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
  if (fast == nullptr) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

int Walker_init(WalkerObject *self, PyObject *args, PyObject *) {
  PyObject *nextmove, *rowbase, *output;
  if (!PyArg_ParseTuple(args, "OOO", &nextmove, &rowbase, &output)) return -1;
  if (self->have_buffer) {
    PyBuffer_Release(&self->nextmove);
    self->have_buffer = false;
  }
  if (PyObject_GetBuffer(nextmove, &self->nextmove, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
  self->have_buffer = true;
  if (self->nextmove.itemsize != 4 || self->nextmove.format == nullptr ||
      (std::string(self->nextmove.format) != "I" && std::string(self->nextmove.format) != "=I")) {
    PyErr_SetString(PyExc_TypeError, "nextmove must be an array of unsigned 32-bit ints");
    return -1;
  }
  std::vector<long> rows, out;
  if (!list_to_vector(rowbase, rows) || !list_to_vector(output, out)) return -1;
  const Py_ssize_t n_moves = self->nextmove.len / 4;
  const uint32_t *moves = static_cast<const uint32_t *>(self->nextmove.buf);
  long max_feature = -1;
  for (long f : out) max_feature = f > max_feature ? f : max_feature;
  // Validate the tables once, so the walk needs no bounds checks.
  for (long r : rows) {
    if (r < 0 || r + 256 > n_moves) {
      PyErr_SetString(PyExc_ValueError, "rowbase points outside nextmove");
      return -1;
    }
  }
  uint32_t max_move = 0;  // (a max the compiler vectorises: 39 MB of moves, checked at every start)
  for (Py_ssize_t i = 0; i < n_moves; ++i) max_move = std::max(max_move, moves[i]);
  if (n_moves > 0 && (max_move >= rows.size() || max_move >= out.size())) {
    PyErr_SetString(PyExc_ValueError, "nextmove names a state without a row or output");
    return -1;
  }
  delete self->rowbase;
  delete self->output;
  delete self->counts;
  self->rowbase = new std::vector<Py_ssize_t>(rows.begin(), rows.end());
  self->output = new std::vector<long>(std::move(out));
  self->counts = new std::vector<long>(static_cast<size_t>(max_feature + 1), 0);
  return 0;
}

// The DFA walk over `data`: the features seen, in first-seen order (as
// collections.Counter builds them), each with its count.  The scratch counts are read and
// reset before returning, i.e. before any Python object is made (which may let another
// thread in).
bool walk(WalkerObject *self, PyObject *arg, std::vector<std::pair<long, long>> &visits) {
  if (self->rowbase == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "walker not initialised");
    return false;
  }
  Py_buffer data;
  if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return false;
  const unsigned char *bytes = static_cast<const unsigned char *>(data.buf);
  const uint32_t *moves = static_cast<const uint32_t *>(self->nextmove.buf);
  const std::vector<Py_ssize_t> &rowbase = *self->rowbase;
  const std::vector<long> &output = *self->output;
  std::vector<long> &counts = *self->counts;
  auto step = [&](size_t state, unsigned char byte) { return static_cast<size_t>(moves[rowbase[state] + byte]); };
  // The features seen, in text order.  Each step of the walk waits for a read from the
  // 39 MB table, so long inputs are walked as kChains segments at once, interleaved, which
  // lets the CPU wait for several reads at a time.  A segment's walk starts kWarmUp bytes
  // early in the start state: the automaton's state depends on the last few bytes only
  // (its features are byte n-grams, n <= 4), so it is in the state the walk from the
  // beginning reaches there; that is checked, and a segment where it does not hold is
  // walked again from the right state, so the result is always the sequential walk's.
  std::vector<long> emitted;
  const Py_ssize_t n = data.len;
  constexpr int kChains = 4;
  constexpr Py_ssize_t kWarmUp = 16, kMinParallel = 1024;
  if (n < kMinParallel) {
    size_t state = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      state = step(state, bytes[i]);
      if (output[state] >= 0) emitted.push_back(output[state]);
    }
  } else {
    Py_ssize_t bound[kChains + 1], pos[kChains];
    size_t state[kChains], start_state[kChains];
    std::vector<long> seen[kChains];
    for (int k = 0; k <= kChains; ++k) bound[k] = n * k / kChains;
    for (int k = 0; k < kChains; ++k) {
      state[k] = 0;
      pos[k] = k == 0 ? 0 : bound[k] - kWarmUp;
    }
    for (Py_ssize_t j = 0; j < kWarmUp; ++j) {
      for (int k = 1; k < kChains; ++k) state[k] = step(state[k], bytes[pos[k]++]);
    }
    Py_ssize_t shortest = n;
    for (int k = 0; k < kChains; ++k) {
      start_state[k] = state[k];
      shortest = std::min(shortest, bound[k + 1] - bound[k]);
    }
    for (Py_ssize_t j = 0; j < shortest; ++j) {
      for (int k = 0; k < kChains; ++k) {
        state[k] = step(state[k], bytes[pos[k]++]);
        if (output[state[k]] >= 0) seen[k].push_back(output[state[k]]);
      }
    }
    for (int k = 0; k < kChains; ++k) {
      for (; pos[k] < bound[k + 1]; ++pos[k]) {
        state[k] = step(state[k], bytes[pos[k]]);
        if (output[state[k]] >= 0) seen[k].push_back(output[state[k]]);
      }
    }
    for (int k = 0; k < kChains; ++k) {
      if (k > 0 && start_state[k] != state[k - 1]) {  // walk this segment again, from the right state
        seen[k].clear();
        state[k] = state[k - 1];
        for (Py_ssize_t i = bound[k]; i < bound[k + 1]; ++i) {
          state[k] = step(state[k], bytes[i]);
          if (output[state[k]] >= 0) seen[k].push_back(output[state[k]]);
        }
      }
      emitted.insert(emitted.end(), seen[k].begin(), seen[k].end());
    }
  }
  PyBuffer_Release(&data);
  std::vector<long> order;
  for (long f : emitted) {
    if (counts[f]++ == 0) order.push_back(f);
  }
  visits.clear();
  visits.reserve(order.size());
  for (long f : order) {
    visits.emplace_back(f, counts[f]);
    counts[f] = 0;
  }
  return true;
}

// {feature: count} in first-seen order, or None.
PyObject *Walker_visit_counts(WalkerObject *self, PyObject *arg) {
  std::vector<std::pair<long, long>> visits;
  if (!walk(self, arg, visits)) return nullptr;
  if (visits.empty()) Py_RETURN_NONE;
  PyObject *dict = PyDict_New();
  if (dict == nullptr) return nullptr;
  bool failed = false;
  for (const auto &visit : visits) {
    PyObject *key = PyLong_FromLong(visit.first), *value = PyLong_FromLong(visit.second);
    failed = key == nullptr || value == nullptr || PyDict_SetItem(dict, key, value) < 0;
    Py_XDECREF(key);
    Py_XDECREF(value);
    if (failed) break;
  }
  if (failed) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict;
}

// IEEE half -> single precision, exact (every half value is a float value).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {  // subnormal half: a normal float
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

const std::vector<float> &half_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = half_to_float(static_cast<uint16_t>(h));
    return t;
  }();
  return table;
}

// (counts, rows): py3langid's `_sparse_score` inputs, made without a dict and without
// numpy's slow half-precision cast.  `counts` holds the float32 count of each feature
// in first-seen order; `rows` the float32 copy of each feature's row of `table` (a
// C-contiguous float16 matrix, py3langid's nb_ptc), in the same order.  Both are bytes
// (empty when no feature was seen), for numpy.frombuffer.
PyObject *Walker_features(WalkerObject *self, PyObject *args) {
  PyObject *data, *table_obj;
  if (!PyArg_ParseTuple(args, "OO", &data, &table_obj)) return nullptr;
  Py_buffer table;
  if (PyObject_GetBuffer(table_obj, &table, PyBUF_FORMAT | PyBUF_ND | PyBUF_C_CONTIGUOUS) < 0) return nullptr;
  std::unique_ptr<Py_buffer, decltype(&PyBuffer_Release)> release(&table, PyBuffer_Release);
  if (table.ndim != 2 || table.itemsize != 2 || table.format == nullptr ||
      (std::string(table.format) != "e" && std::string(table.format) != "=e" &&
       std::string(table.format) != "<e")) {
    PyErr_SetString(PyExc_TypeError, "table must be a 2-D C-contiguous float16 array");
    return nullptr;
  }
  const Py_ssize_t n_rows = table.shape[0], n_cols = table.shape[1];
  std::vector<std::pair<long, long>> visits;
  if (!walk(self, data, visits)) return nullptr;
  for (const auto &visit : visits) {
    if (visit.first >= n_rows) {
      PyErr_SetString(PyExc_ValueError, "a feature has no row in the table");
      return nullptr;
    }
  }
  const Py_ssize_t n = static_cast<Py_ssize_t>(visits.size());
  PyObject *counts = PyBytes_FromStringAndSize(nullptr, n * 4);
  PyObject *rows = counts == nullptr ? nullptr : PyBytes_FromStringAndSize(nullptr, n * n_cols * 4);
  if (rows == nullptr) {
    Py_XDECREF(counts);
    return nullptr;
  }
  float *count_out = reinterpret_cast<float *>(PyBytes_AS_STRING(counts));
  float *row_out = reinterpret_cast<float *>(PyBytes_AS_STRING(rows));
  const uint16_t *halves = static_cast<const uint16_t *>(table.buf);
  const float *to_float = half_table().data();
  for (Py_ssize_t i = 0; i < n; ++i) {
    count_out[i] = static_cast<float>(visits[i].second);
    const uint16_t *row = halves + visits[i].first * n_cols;
    for (Py_ssize_t j = 0; j < n_cols; ++j) row_out[i * n_cols + j] = to_float[row[j]];
  }
  return Py_BuildValue("(NN)", counts, rows);
}

PyMethodDef Walker_methods[] = {
    {"visit_counts", reinterpret_cast<PyCFunction>(Walker_visit_counts), METH_O,
     "visit_counts(data: bytes) -> {feature: count} in first-seen order, or None"},
    {"features", reinterpret_cast<PyCFunction>(Walker_features), METH_VARARGS,
     "features(data: bytes, table: float16[n, k]) -> (float32 counts, float32 rows) as bytes"},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject WalkerType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---------------------------------------------------------------------------------------
// Counting words of a set (language._function_word_share): runs of [^\W\d_]

struct WordCounterObject {
  PyObject_HEAD
  std::unordered_set<std::string> *words;
  size_t max_length;
};

void WordCounter_dealloc(WordCounterObject *self) {
  delete self->words;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

int WordCounter_init(WordCounterObject *self, PyObject *args, PyObject *) {
  PyObject *words;
  if (!PyArg_ParseTuple(args, "O", &words)) return -1;
  PyObject *iter = PyObject_GetIter(words);
  if (iter == nullptr) return -1;
  auto *set = new std::unordered_set<std::string>();
  size_t max_length = 0;
  PyObject *item;
  while ((item = PyIter_Next(iter)) != nullptr) {
    Py_ssize_t size;
    const char *utf8 = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : nullptr;
    if (utf8 == nullptr) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "words must be str");
      Py_DECREF(item);
      Py_DECREF(iter);
      delete set;
      return -1;
    }
    set->emplace(utf8, size);
    max_length = static_cast<size_t>(size) > max_length ? size : max_length;
    Py_DECREF(item);
  }
  Py_DECREF(iter);
  if (PyErr_Occurred()) {
    delete set;
    return -1;
  }
  delete self->words;
  self->words = set;
  self->max_length = max_length;
  return 0;
}

// (words in the set, all words) of text; a word is a run of [^\W\d_] (re semantics).
PyObject *WordCounter_count(WordCounterObject *self, PyObject *arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "expected str");
    return nullptr;
  }
  if (self->words == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "counter not initialised");
    return nullptr;
  }
  const UText t(arg);
  long hits = 0, total = 0;
  std::string word;
  Py_ssize_t i = 0;
  while (i < t.length) {
    Py_UCS4 c = t[i];
    if (!is_letter(c)) {
      ++i;
      continue;
    }
    word.clear();
    bool fits = true;
    while (i < t.length) {
      c = t[i];
      if (!is_letter(c)) break;
      if (fits) {
        append_utf8(word, c);
        fits = word.size() <= self->max_length;
      }
      ++i;
    }
    ++total;
    hits += fits && self->words->count(word) > 0;
  }
  return Py_BuildValue("(ll)", hits, total);
}

PyMethodDef WordCounter_methods[] = {
    {"count", reinterpret_cast<PyCFunction>(WordCounter_count), METH_O,
     "count(text) -> (words of text in the set, words of text)"},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject WordCounterType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---------------------------------------------------------------------------------------

// language.sample_for_identification: the longest lines (stable order among equals, as
// sorted(..., reverse=True)), each cut to `limit` characters, until `limit` characters are
// reached, joined by newlines; the text itself when it is no longer than `limit`.
PyObject *sample_lines(PyObject *, PyObject *args) {
  PyObject *text;
  Py_ssize_t limit;
  if (!PyArg_ParseTuple(args, "Un", &text, &limit)) return nullptr;
  const UText t(text);
  if (t.length <= limit) {
    Py_INCREF(text);
    return text;
  }
  std::vector<std::pair<Py_ssize_t, Py_ssize_t>> lines;  // (start, end) of lines with a non-space
  Py_ssize_t start = 0;
  bool content = false;
  for (Py_ssize_t i = 0; i <= t.length; ++i) {
    if (i == t.length || t[i] == '\n') {
      if (content) lines.emplace_back(start, i);
      start = i + 1;
      content = false;
    } else if (!content && !is_space(t[i])) {
      content = true;
    }
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto &a, const auto &b) {
    return a.second - a.first > b.second - b.first;
  });
  PyObject *picked = PyList_New(0);
  if (picked == nullptr) return nullptr;
  Py_ssize_t size = 0;
  for (const auto &line : lines) {
    const Py_ssize_t end = std::min(line.second, line.first + limit);
    PyObject *piece = PyUnicode_Substring(text, line.first, end);
    if (piece == nullptr || PyList_Append(picked, piece) < 0) {
      Py_XDECREF(piece);
      Py_DECREF(picked);
      return nullptr;
    }
    Py_DECREF(piece);
    size += end - line.first;
    if (size >= limit) break;
  }
  PyObject *newline = PyUnicode_FromString("\n");
  PyObject *sample = newline == nullptr ? nullptr : PyUnicode_Join(newline, picked);
  Py_XDECREF(newline);
  Py_DECREF(picked);
  return sample;
}

// ---------------------------------------------------------------------------------------
// str(data, "utf-8") that keeps its UTF-8 form (native.utf8_text)
//
// CPython caches a str's UTF-8 form once something asks for it (PyUnicode_AsUTF8AndSize, which
// lexbor's parser in resiliparse calls, and str.encode uses the cache): a page decoded from UTF-8
// bytes and then parsed is encoded back to UTF-8 first, ~0.1 s per 100 MB of non-ASCII pages.
// Here the bytes it was decoded from become that cache (they are exactly its UTF-8 form: strict
// decoding succeeded, so no surrogates).  Not on a free-threaded build, whose cache is written
// atomically by CPython.

// Decoding, in two passes over the bytes: the first checks that they are well-formed UTF-8 (the Unicode
// standard's table 3-7, which is what CPython's strict decoder accepts) and counts their characters and the
// largest, the second writes them into a str of the kind that largest one needs, as CPython would make it.
// A page is mostly ASCII (the articles' pages: 2 % of their bytes beyond it), which both passes step over 16
// bytes at a time where the processor has SSE2 (every x86-64), else 8: PyUnicode_DecodeUTF8 goes a character
// at a time once it has met one beyond ASCII, and widens its buffer (a copy) at the first past U+00FF.  Bytes
// that are not well-formed are left to PyUnicode_DecodeUTF8 (the caller's), which says what is wrong with them.

#if defined(__SSE2__)
constexpr Py_ssize_t kAsciiBlock = 16;

// The bytes of s[0:16] that are not ASCII, one bit each (bit k: s[k]).
inline unsigned non_ascii_bits(const unsigned char *s) {
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(s))));
}

// The 16 ASCII bytes of s as 16 code units of type T at out.
template <class T>
inline void widen_ascii_block(const unsigned char *s, T *out) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s));
  if constexpr (sizeof(T) == 1) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out), bytes);
  } else {
    const __m128i zero = _mm_setzero_si128();
    const __m128i low = _mm_unpacklo_epi8(bytes, zero), high = _mm_unpackhi_epi8(bytes, zero);
    if constexpr (sizeof(T) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out), low);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 8), high);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm_unpacklo_epi16(low, zero));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 4), _mm_unpackhi_epi16(low, zero));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 8), _mm_unpacklo_epi16(high, zero));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 12), _mm_unpackhi_epi16(high, zero));
    }
  }
}
#else
constexpr Py_ssize_t kAsciiBlock = 8;

inline unsigned non_ascii_bits(const unsigned char *s) {
  unsigned bits = 0;
  for (int k = 0; k < 8; ++k) bits |= static_cast<unsigned>(s[k] >> 7) << k;
  return bits;
}

template <class T>
inline void widen_ascii_block(const unsigned char *s, T *out) {
  for (int k = 0; k < 8; ++k) out[k] = static_cast<T>(s[k]);
}
#endif

inline bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The ASCII bytes at the start of a block whose `bits` (non_ascii_bits) are not all 0.
inline int ascii_prefix(unsigned bits) { return __builtin_ctz(bits); }

// Whether s[0:n] is well-formed UTF-8; if so, its characters and the largest of them.
bool utf8_measure(const unsigned char *s, Py_ssize_t n, Py_ssize_t *chars, Py_UCS4 *largest) {
  Py_ssize_t i = 0, count = 0;
  Py_UCS4 top = 0;
  while (i < n) {
    if (n - i >= kAsciiBlock) {
      const unsigned bits = non_ascii_bits(s + i);
      if (bits == 0) {
        i += kAsciiBlock;
        count += kAsciiBlock;
        continue;
      }
      const int ascii = ascii_prefix(bits);
      i += ascii;
      count += ascii;
    }
    const unsigned c = s[i];
    Py_UCS4 code;
    if (c < 0x80) {
      i += 1;
      ++count;
      continue;
    } else if (c < 0xC2) {  // a continuation byte, or the lead of an overlong form
      return false;
    } else if (c < 0xE0) {
      if (n - i < 2 || !continuation(s[i + 1])) return false;
      code = ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
      i += 2;
    } else if (c < 0xF0) {
      if (n - i < 3 || !continuation(s[i + 1]) || !continuation(s[i + 2])) return false;
      if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0)) return false;  // overlong, surrogate
      code = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
      i += 3;
    } else if (c < 0xF5) {
      if (n - i < 4 || !continuation(s[i + 1]) || !continuation(s[i + 2]) || !continuation(s[i + 3])) return false;
      if ((c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90)) return false;  // overlong, > U+10FFFF
      code = ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
      i += 4;
    } else {
      return false;
    }
    top = std::max(top, code);
    ++count;
  }
  *chars = count;
  *largest = top;
  return true;
}

// The `chars` characters of well-formed UTF-8 s[0:n] (`utf8_measure`'s) into `out`, each as a T.
template <class T>
void utf8_fill(const unsigned char *s, Py_ssize_t n, T *out, Py_ssize_t chars) {
  T *const end = out + chars;
  Py_ssize_t i = 0;
  while (i < n) {
    // (a block is written whole only where the str has room for it: fewer characters than bytes may follow)
    if (n - i >= kAsciiBlock && end - out >= kAsciiBlock) {
      const unsigned bits = non_ascii_bits(s + i);
      widen_ascii_block(s + i, out);  // (past its ASCII prefix: overwritten by what follows)
      if (bits == 0) {
        i += kAsciiBlock;
        out += kAsciiBlock;
        continue;
      }
      const int ascii = ascii_prefix(bits);
      i += ascii;
      out += ascii;
    }
    const unsigned c = s[i];
    if (c < 0x80) {
      *out++ = static_cast<T>(c);
      i += 1;
    } else if (c < 0xE0) {
      *out++ = static_cast<T>(((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu));
      i += 2;
    } else if (c < 0xF0) {
      *out++ = static_cast<T>(((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu));
      i += 3;
    } else {
      *out++ = static_cast<T>(((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) |
                              (s[i + 3] & 0x3Fu));
      i += 4;
    }
  }
}

// str(s[0:n], "utf-8") for well-formed UTF-8; nullptr with no error set when the bytes are not (or with
// MemoryError set).
PyObject *decode_well_formed_utf8(const char *data, Py_ssize_t n) {
  const auto *s = reinterpret_cast<const unsigned char *>(data);
  Py_ssize_t chars;
  Py_UCS4 largest;
  if (!utf8_measure(s, n, &chars, &largest)) return nullptr;
  PyObject *text = PyUnicode_New(chars, largest);
  if (text == nullptr) return nullptr;
  switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
      if (largest < 0x80) {
        std::memcpy(PyUnicode_1BYTE_DATA(text), s, n);
      } else {
        utf8_fill(s, n, PyUnicode_1BYTE_DATA(text), chars);
      }
      break;
    case PyUnicode_2BYTE_KIND:
      utf8_fill(s, n, PyUnicode_2BYTE_DATA(text), chars);
      break;
    default:
      utf8_fill(s, n, PyUnicode_4BYTE_DATA(text), chars);
  }
  return text;
}

PyObject *utf8_text(PyObject *, PyObject *arg) {
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return nullptr;
  const char *data = static_cast<const char *>(view.buf);
  PyObject *text = decode_well_formed_utf8(data, view.len);
  if (text == nullptr && PyErr_Occurred()) {
    PyBuffer_Release(&view);
    return nullptr;
  }
  if (text == nullptr) text = PyUnicode_DecodeUTF8(data, view.len, nullptr);  // (it says what is wrong)
  if (text == nullptr) {
    PyBuffer_Release(&view);
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return nullptr;
    PyErr_Clear();
    Py_RETURN_NONE;  // not valid UTF-8: the caller decodes it its own way
  }
#ifndef Py_GIL_DISABLED
  if (!PyUnicode_IS_ASCII(text)) {  // (an ASCII str is its own UTF-8 form)
    auto *compact = reinterpret_cast<PyCompactUnicodeObject *>(text);
    if (compact->utf8 == nullptr) {
      char *copy = static_cast<char *>(PyObject_Malloc(view.len + 1));
      if (copy != nullptr) {  // (no memory for the copy: the str without it)
        std::memcpy(copy, data, view.len);
        copy[view.len] = '\0';
        compact->utf8 = copy;
        compact->utf8_length = view.len;
      }
    }
  }
#endif
  PyBuffer_Release(&view);
  return text;
}

// A str as its code units, for the extraction child (sandbox.send_page, native.page_units/page_text).
//
// The child used to decode each page from its UTF-8 bytes (~80 us a 165 KB page of two-byte code
// units): here it copies the parent's code units (its PEP 393 kind: one, two or four bytes a
// character) into a new str of the same kind, and the parent's UTF-8 form beside them into that
// str's cache.  The str is the parent's, as the decoding made it.

// The kind a page's units travel as: 0 for an ASCII str (its units are its UTF-8 form), else PyUnicode_KIND.
int units_kind(PyObject *text) {
  return PyUnicode_IS_ASCII(text) ? 0 : static_cast<int>(PyUnicode_KIND(text));
}

// The UTF-8 form a non-ASCII str holds (CPython's cache of it), else nullptr.
const char *held_utf8(PyObject *text, Py_ssize_t *size) {
#ifndef Py_GIL_DISABLED
  if (PyUnicode_IS_COMPACT(text) && !PyUnicode_IS_ASCII(text)) {
    auto *compact = reinterpret_cast<PyCompactUnicodeObject *>(text);
    *size = compact->utf8_length;
    return compact->utf8;
  }
#endif
  return nullptr;
}

// page_units(text, buffer) -> (kind, length, utf8 size), or None: text's code units written at the
// start of the writable `buffer`, its UTF-8 form after them where the str holds one and it fits
// (utf8 size 0: not written); None where the units do not fit.
PyObject *page_units(PyObject *, PyObject *args) {
  PyObject *text, *target;
  if (!PyArg_ParseTuple(args, "UO", &text, &target)) return nullptr;
#if PY_VERSION_HEX < 0x030C0000
  if (PyUnicode_READY(text) < 0) return nullptr;
#endif
  Py_buffer view;
  if (PyObject_GetBuffer(target, &view, PyBUF_WRITABLE) < 0) return nullptr;
  const int kind = units_kind(text);
  const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
  const Py_ssize_t units = length * (kind == 0 ? 1 : kind);
  if (units > view.len) {
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
  }
  char *out = static_cast<char *>(view.buf);
  std::memcpy(out, PyUnicode_DATA(text), units);
  Py_ssize_t utf8_size = 0;
  const char *utf8 = kind == 0 ? nullptr : held_utf8(text, &utf8_size);
  if (utf8 == nullptr || utf8_size > view.len - units) {
    utf8_size = 0;
  } else {
    std::memcpy(out + units, utf8, utf8_size);
  }
  PyBuffer_Release(&view);
  return Py_BuildValue("inn", kind, length, utf8_size);
}

// page_text(buffer, kind, length, utf8 size) -> str: page_units' str back from `buffer`; its UTF-8 form
// kept (the one sent, else encoded here, as the parser would ask for it: none for a lone surrogate).
PyObject *page_text(PyObject *, PyObject *args) {
  PyObject *source;
  int kind;
  Py_ssize_t length, utf8_size;
  if (!PyArg_ParseTuple(args, "Oinn", &source, &kind, &length, &utf8_size)) return nullptr;
  static const Py_UCS4 max_chars[] = {127, 255, 0xFFFF, 0, 0x10FFFF};
  if (kind < 0 || kind > 4 || kind == 3 || length < 0 || utf8_size < 0 || (kind == 0 && utf8_size != 0)) {
    PyErr_SetString(PyExc_ValueError, "page_text: not a page's kind, length and UTF-8 size");
    return nullptr;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) < 0) return nullptr;
  const Py_ssize_t units = length * (kind == 0 ? 1 : kind);
  if (units > view.len || utf8_size > view.len - units) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_ValueError, "page_text: the buffer is shorter than the page");
    return nullptr;
  }
  // (the units of a str of this kind, so canonical: the parent's str was)
  PyObject *text = PyUnicode_New(length, max_chars[kind]);
  if (text == nullptr) {
    PyBuffer_Release(&view);
    return nullptr;
  }
  const char *in = static_cast<const char *>(view.buf);
  std::memcpy(PyUnicode_DATA(text), in, units);
#ifndef Py_GIL_DISABLED
  if (kind != 0 && utf8_size > 0) {
    char *copy = static_cast<char *>(PyObject_Malloc(utf8_size + 1));
    if (copy != nullptr) {  // (no memory for the copy: the str without it, encoded below)
      std::memcpy(copy, in + units, utf8_size);
      copy[utf8_size] = '\0';
      auto *compact = reinterpret_cast<PyCompactUnicodeObject *>(text);
      compact->utf8 = copy;
      compact->utf8_length = utf8_size;
    }
  }
#endif
  PyBuffer_Release(&view);
  if (kind != 0 && PyUnicode_AsUTF8AndSize(text, nullptr) == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
      Py_DECREF(text);
      return nullptr;
    }
    PyErr_Clear();  // (a lone surrogate: no UTF-8 form, as a page decoded with surrogatepass)
  }
  return text;
}

// Whether `text` (a str) holds its UTF-8 form (CPython's cache of it): it then has no lone
// surrogate, as only a strict encoding (PyUnicode_AsUTF8AndSize) or utf8_text's strict decoding
// makes one.  (False where it is not kept, or on a free-threaded build.)
PyObject *has_utf8_form(PyObject *, PyObject *arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "has_utf8_form needs a str");
    return nullptr;
  }
#ifndef Py_GIL_DISABLED
  if (PyUnicode_IS_COMPACT(arg) && !PyUnicode_IS_ASCII(arg) &&
      reinterpret_cast<PyCompactUnicodeObject *>(arg)->utf8 != nullptr)
    Py_RETURN_TRUE;
#endif
  Py_RETURN_FALSE;
}

// ---------------------------------------------------------------------------------------
// The extractors' text helpers (plexity_plugins/extractors/text.py has the Python references):
// whitespace is str.split()'s (Py_UNICODE_ISSPACE), lines are split at "\n" only, as
// text.split("\n") does.

template <typename C>
Py_ssize_t words_of(const C *s, Py_ssize_t n) {
  Py_ssize_t words = 0;
  bool in_word = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const bool space = is_space(s[i]);
    words += !space && !in_word;
    in_word = !space;
  }
  return words;
}

template <typename C>
Py_ssize_t nonspace_of(const C *s, Py_ssize_t n) {
  Py_ssize_t count = 0;
  for (Py_ssize_t i = 0; i < n; ++i) count += !is_space(s[i]);
  return count;
}

// re.compile(r"^(?:•|\d+\.)(?: |$)", re.M).findall: lines that start with a bullet, or with
// decimal digits (re's \d: Py_UNICODE_ISDECIMAL) and a full stop, followed by a space or the
// end of the line.
template <typename C>
Py_ssize_t list_marks_of(const C *s, Py_ssize_t n) {
  Py_ssize_t marks = 0;
  Py_ssize_t i = 0;
  while (i < n) {
    Py_ssize_t j = i;
    if (s[j] == 0x2022) {
      ++j;
    } else if (Py_UNICODE_ISDECIMAL(s[j])) {
      while (j < n && Py_UNICODE_ISDECIMAL(s[j])) ++j;
      j = (j < n && s[j] == '.') ? j + 1 : -1;
    } else {
      j = -1;
    }
    if (j >= 0 && (j == n || s[j] == ' ' || s[j] == '\n')) ++marks;
    while (i < n && s[i] != '\n') ++i;  // the next line
    ++i;
  }
  return marks;
}

// "\n".join(filter(None, map(" ".join, map(str.split, text.split("\n"))))) into `out`;
// returns the length written (at most n).
template <typename C>
Py_ssize_t collapse_into(const C *s, Py_ssize_t n, C *out) {
  Py_ssize_t o = 0;
  bool line_has_word = false;  // a word written on the current line
  bool any_line = false;       // a line written before the current one
  bool in_word = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const C c = s[i];
    if (c == '\n') {
      any_line = any_line || line_has_word;
      line_has_word = in_word = false;
    } else if (is_space(c)) {
      in_word = false;
    } else {
      if (!in_word) {
        if (line_has_word) {
          out[o++] = ' ';
        } else if (any_line) {
          out[o++] = '\n';
        }
        line_has_word = in_word = true;
      }
      out[o++] = c;
    }
  }
  return o;
}

bool check_str(PyObject *arg) {
  if (PyUnicode_Check(arg)) return true;
  PyErr_SetString(PyExc_TypeError, "expected str");
  return false;
}

template <template <typename> class F>
Py_ssize_t dispatch_count(PyObject *text) {
  const void *data = PyUnicode_DATA(text);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
  switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND: return F<Py_UCS1>::run(static_cast<const Py_UCS1 *>(data), n);
    case PyUnicode_2BYTE_KIND: return F<Py_UCS2>::run(static_cast<const Py_UCS2 *>(data), n);
    default: return F<Py_UCS4>::run(static_cast<const Py_UCS4 *>(data), n);
  }
}

template <typename C> struct Words { static Py_ssize_t run(const C *s, Py_ssize_t n) { return words_of(s, n); } };
template <typename C> struct Nonspace { static Py_ssize_t run(const C *s, Py_ssize_t n) { return nonspace_of(s, n); } };
template <typename C> struct MarkedWords {
  static Py_ssize_t run(const C *s, Py_ssize_t n) { return words_of(s, n) - list_marks_of(s, n); }
};

PyObject *count_words(PyObject *, PyObject *arg) {
  return check_str(arg) ? PyLong_FromSsize_t(dispatch_count<Words>(arg)) : nullptr;
}

PyObject *count_nonspace(PyObject *, PyObject *arg) {
  return check_str(arg) ? PyLong_FromSsize_t(dispatch_count<Nonspace>(arg)) : nullptr;
}

PyObject *count_marked_words(PyObject *, PyObject *arg) {
  return check_str(arg) ? PyLong_FromSsize_t(dispatch_count<MarkedWords>(arg)) : nullptr;
}

template <typename C>
PyObject *collapse_lines_of(const C *s, Py_ssize_t n, int kind) {
  std::unique_ptr<C[]> out(new C[n > 0 ? n : 1]);
  const Py_ssize_t length = collapse_into(s, n, out.get());
  // (PyUnicode_FromKindAndData finds the narrowest kind that holds the result, as CPython's
  // own str operations do: equal strs then have equal kinds)
  return PyUnicode_FromKindAndData(kind, out.get(), length);
}

PyObject *collapse_lines(PyObject *, PyObject *arg) {
  if (!check_str(arg)) return nullptr;
  const void *data = PyUnicode_DATA(arg);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
  switch (PyUnicode_KIND(arg)) {
    case PyUnicode_1BYTE_KIND: return collapse_lines_of(static_cast<const Py_UCS1 *>(data), n, PyUnicode_1BYTE_KIND);
    case PyUnicode_2BYTE_KIND: return collapse_lines_of(static_cast<const Py_UCS2 *>(data), n, PyUnicode_2BYTE_KIND);
    default: return collapse_lines_of(static_cast<const Py_UCS4 *>(data), n, PyUnicode_4BYTE_KIND);
  }
}

// The first place of `pattern` (m > 0 bytes) in `data` (n bytes), or nullptr: glibc's (and the BSDs')
// memmem; a memchr-and-compare loop where the C library has none (MSVC's).
inline const char *library_find_bytes(const char *data, size_t n, const char *pattern, size_t m) {
#ifdef _WIN32
  for (const char *end = data + n; static_cast<size_t>(end - data) >= m; ++data) {
    data = static_cast<const char *>(std::memchr(data, pattern[0], (end - data) - m + 1));
    if (data == nullptr) return nullptr;
    if (std::memcmp(data, pattern, m) == 0) return data;
  }
  return nullptr;
#else
  return static_cast<const char *>(memmem(data, n, pattern, m));
#endif
}

// `library_find_bytes`, 16 places at a time where the processor has SSE2 (every x86-64): the places whose
// byte is the pattern's first and whose byte m - 1 on is its last, then those compared whole.  A page's
// declarations ("@type", "itemtype", "og:type") are looked for in its 170 KB: glibc's memmem took ~35 us a
// marker, the place of most of a page's look for them.
inline const char *find_bytes(const char *data, size_t n, const char *pattern, size_t m) {
#if defined(__SSE2__)
  if (m >= 2 && n >= m + 15) {
    const __m128i first = _mm_set1_epi8(pattern[0]), last = _mm_set1_epi8(pattern[m - 1]);
    size_t at = 0;
    for (; at + m + 15 <= n; at += 16) {  // (the 16 places at..at+15, their last bytes up to at + m + 14)
      const __m128i starts = _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + at));
      const __m128i ends = _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + at + m - 1));
      unsigned places = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(starts, first), _mm_cmpeq_epi8(ends, last))));
      while (places != 0) {
        const size_t place = at + static_cast<size_t>(__builtin_ctz(places));
        if (std::memcmp(data + place + 1, pattern + 1, m - 2) == 0) return data + place;
        places &= places - 1;
      }
    }
    return library_find_bytes(data + at, n - at, pattern, m);  // (the last places, fewer than 16)
  }
#endif
  return library_find_bytes(data, n, pattern, m);
}

// Where `needle` starts in `text` (every place, overlapping ones too): the positions str.find
// gives one after the other.  By glibc's memmem, a few times faster than CPython's search on a
// whole page, over the text's UTF-8 form where the str holds it (an ASCII str; a page decoded by
// utf8_text) or its one-byte buffer, counting characters up to each hit; else by CPython's own
// search (PyUnicode_Find).
PyObject *find_all(PyObject *, PyObject *args) {
  PyObject *text, *needle;
  Py_ssize_t limit = -1;  // at most this many positions, the first ones (negative: all)
  if (!PyArg_ParseTuple(args, "UU|n", &text, &needle, &limit)) return nullptr;
  PyObject *found = PyList_New(0);
  if (found == nullptr) return nullptr;
  if (limit == 0) return found;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(needle);
  bool full = false;  // `limit` positions found: the search stops (as if the text ended there)
  auto add = [&](Py_ssize_t at) {
    PyObject *position = PyLong_FromSsize_t(at);
    const bool ok = position != nullptr && PyList_Append(found, position) == 0;
    Py_XDECREF(position);
    full = limit > 0 && PyList_GET_SIZE(found) >= limit;
    return ok;
  };
  auto fail = [&]() {
    Py_DECREF(found);
    return nullptr;
  };
  if (m == 0) {  // (str.find finds the empty string at every position, the end included)
    for (Py_ssize_t at = 0; at <= n && !full; ++at)
      if (!add(at)) return fail();
    return found;
  }
  const char *data = nullptr;  // bytes in which a hit starts on a character's first byte
  Py_ssize_t size = 0;
  bool utf8 = false;  // (else one byte per character)
  if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND) {
    data = static_cast<const char *>(PyUnicode_DATA(text));
    size = n;
  }
#ifndef Py_GIL_DISABLED
  else if (PyUnicode_IS_COMPACT(text) && reinterpret_cast<PyCompactUnicodeObject *>(text)->utf8 != nullptr) {
    data = reinterpret_cast<PyCompactUnicodeObject *>(text)->utf8;
    size = reinterpret_cast<PyCompactUnicodeObject *>(text)->utf8_length;
    utf8 = true;
  }
#endif
  const char *pattern = nullptr;
  Py_ssize_t pattern_size = 0;
  if (data != nullptr) {
    if (!utf8) {
      if (PyUnicode_KIND(needle) != PyUnicode_1BYTE_KIND) return found;  // a character the text cannot hold
      pattern = static_cast<const char *>(PyUnicode_DATA(needle));
      pattern_size = m;
    } else {
      pattern = PyUnicode_AsUTF8AndSize(needle, &pattern_size);
      if (pattern == nullptr) {  // (a lone surrogate: not in a text that has a UTF-8 form)
        PyErr_Clear();
        return found;
      }
    }
  }
  if (data == nullptr) {
    for (Py_ssize_t at = PyUnicode_Find(text, needle, 0, n, 1); at >= 0 && !full;
         at = full ? -1 : PyUnicode_Find(text, needle, at + 1, n, 1))
      if (!add(at)) return fail();
    return PyErr_Occurred() ? fail() : found;
  }
  const char *end = data + size, *at = data, *counted = data;
  Py_ssize_t chars = 0;  // characters before `counted`
  while (end - at >= pattern_size) {
    const char *hit = find_bytes(at, end - at, pattern, pattern_size);
    if (hit == nullptr) break;
    if (utf8) {
      for (; counted < hit; ++counted) chars += (static_cast<unsigned char>(*counted) & 0xC0) != 0x80;
    } else {
      chars = hit - data;
    }
    if (!add(chars)) return fail();
    if (full) break;
    at = hit + 1;
  }
  return found;
}

// ---------------------------------------------------------------------------------------
// extractors.nesting: how deep the HTML parser may nest a page (markup_depth_python), and the
// page without the tags past a depth (flatten_markup_python).  Over code points, as the reference
// (every delimiter is ASCII); a tag name is kept as its code points, ASCII letters lowered.

// What a tag name is to the walk (one lookup per tag): bits of NestingFlag.
enum NestingFlag : unsigned {
  kVoid = 1, kRaw = 2, kFormatting = 4, kScope = 8, kTableEnd = 16, kBlock = 32, kNotCounted = 64, kInSelect = 128,
  kCloseSelect = 256, kForeign = 512, kBreakout = 1024
};

std::unordered_map<std::string, unsigned> nesting_flags() {
  std::unordered_map<std::string, unsigned> flags;
  const std::pair<const char *, unsigned> lists[] = {
      {"area base br col embed hr img input keygen link meta param source track wbr", kVoid},
      {"script style textarea title xmp iframe noembed noframes plaintext", kRaw},
      {"a b big code em font i nobr s small strike strong tt u", kFormatting},
      {"applet caption html table td th marquee object template", kScope | kTableEnd},
      {"tbody thead tfoot tr", kTableEnd},
      {"address article aside blockquote caption center dd details dialog dir div dl dt fieldset figcaption figure "
       "footer form h1 h2 h3 h4 h5 h6 header hgroup hr legend li listing main menu nav ol p pre section summary "
       "table tbody td tfoot th thead tr ul", kBlock},
      {"html head body", kNotCounted},
      {"select option optgroup", kInSelect},
      {"select input keygen textarea", kCloseSelect},
      {"svg math", kForeign},
      {"b big blockquote body br center code dd div dl dt em embed font h1 h2 h3 h4 h5 h6 head hr i img li listing "
       "menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var", kBreakout}};
  for (const auto &list : lists) {
    std::string name;
    for (const char *c = list.first;; ++c) {
      if (*c == ' ' || *c == '\0') {
        flags[name] |= list.second;
        name.clear();
        if (*c == '\0') break;
      } else {
        name.push_back(*c);
      }
    }
  }
  return flags;
}

unsigned nesting_flag(const std::string &name) {
  static const std::unordered_map<std::string, unsigned> flags = nesting_flags();
  const auto found = flags.find(name);
  return found == flags.end() ? 0 : found->second;
}

// A tag name as bytes: ASCII letters lowered, other code points in UTF-8 (equal names, equal bytes).
void append_code_point(std::string &out, Py_UCS4 c) {
  append_utf8(out, c >= 'A' && c <= 'Z' ? c + 32 : c);
}

inline bool html_space(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
inline bool name_end(Py_UCS4 c) { return html_space(c) || c == '/' || c == '>'; }
inline bool ascii_letter(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline Py_UCS4 ascii_lower(Py_UCS4 c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// The first place of the ASCII character `c` in s[at:n], or -1: memchr over the bytes for every kind
// (in a two- or four-byte str, a byte equal to `c` is a candidate: the character there is checked).
template <typename C>
Py_ssize_t find_char(const C *s, Py_ssize_t n, Py_ssize_t at, Py_UCS4 c) {
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(s);
  for (size_t from = static_cast<size_t>(at) * sizeof(C), end = static_cast<size_t>(n) * sizeof(C); from < end;) {
    const void *hit = std::memchr(bytes + from, static_cast<int>(c), end - from);
    if (hit == nullptr) return -1;
    const size_t byte = static_cast<const unsigned char *>(hit) - bytes;
    if (s[byte / sizeof(C)] == c) return static_cast<Py_ssize_t>(byte / sizeof(C));
    from = byte + 1;
  }
  return -1;
}

template <typename C>
Py_ssize_t find_ascii(const C *s, Py_ssize_t n, Py_ssize_t at, const char *needle) {
  const Py_ssize_t m = static_cast<Py_ssize_t>(std::strlen(needle));
  for (; at + m <= n; ++at) {
    at = find_char(s, n - m + 1, at, static_cast<Py_UCS4>(needle[0]));
    if (at < 0) return -1;
    Py_ssize_t k = 1;
    while (k < m && s[at + k] == static_cast<C>(needle[k])) ++k;
    if (k == m) return at;
  }
  return -1;
}

// nesting._tag_end: where the tag ends; whether it closes itself ("/>") in `*closes_itself`
// Where the attribute at `at` of a tag ends: its name, then "=" and a value, quoted or not, if one follows
// (nesting.attribute_end; the one rule of the depth pass and of the attribute count)
template <typename C>
Py_ssize_t attribute_end(const C *s, Py_ssize_t n, Py_ssize_t at) {
  while (at < n && !name_end(s[at]) && s[at] != '=') ++at;
  while (at < n && html_space(s[at])) ++at;
  if (at < n && s[at] == '=') {
    ++at;
    while (at < n && html_space(s[at])) ++at;
    if (at < n && (s[at] == '"' || s[at] == '\'')) {
      const Py_ssize_t close = find_char(s, n, at + 1, s[at]);
      at = close < 0 ? n : close + 1;
    } else {
      while (at < n && !html_space(s[at]) && s[at] != '>') ++at;
    }
  }
  return at;
}

template <typename C>
Py_ssize_t tag_end(const C *s, Py_ssize_t n, Py_ssize_t at, bool *closes_itself) {
  bool slash = false;
  while (at < n) {
    const Py_UCS4 c = s[at];
    if (c == '>') {
      *closes_itself = slash;
      return at + 1;
    }
    slash = c == '/';
    if (html_space(c) || slash) {
      ++at;
      continue;
    }
    at = attribute_end(s, n, at);
  }
  *closes_itself = false;
  return n;
}

template <typename C>
bool starts_with_ascii(const C *s, Py_ssize_t n, Py_ssize_t at, const char *prefix) {
  for (; *prefix != '\0'; ++prefix, ++at)
    if (at >= n || s[at] != static_cast<C>(*prefix)) return false;
  return true;
}

// nesting._double_escaped: "<!--" in s[at:end], and then "<script" (any case) and a space, "/" or ">"
template <typename C>
bool double_escaped(const C *s, Py_ssize_t at, Py_ssize_t end) {
  const Py_ssize_t comment = find_ascii(s, end, at, "<!--");
  if (comment < 0) return false;
  static const char kScript[] = "script";
  for (Py_ssize_t lt = find_char(s, end, comment, '<'); lt >= 0; lt = find_char(s, end, lt + 1, '<')) {
    if (lt + 7 >= end) return false;
    Py_ssize_t k = 0;
    while (k < 6 && ascii_lower(s[lt + 1 + k]) == static_cast<Py_UCS4>(kScript[k])) ++k;
    if (k == 6 && name_end(s[lt + 7])) return true;
  }
  return false;
}

// nesting.comment_end: after "-->" or "--!>" (the first), or at once for "<!-->" and "<!--->"
template <typename C>
Py_ssize_t comment_end(const C *s, Py_ssize_t n, Py_ssize_t at) {
  if (at < n && s[at] == '>') return at + 1;
  if (at + 1 < n && s[at] == '-' && s[at + 1] == '>') return at + 2;
  for (Py_ssize_t dash = find_ascii(s, n, at, "--"); dash >= 0; dash = find_ascii(s, n, dash + 1, "--")) {
    if (dash + 2 < n && s[dash + 2] == '>') return dash + 3;
    if (dash + 3 < n && s[dash + 2] == '!' && s[dash + 3] == '>') return dash + 4;
  }
  return n;
}

// nesting._raw_end: the next "</name" (ASCII letters in any case) before a space, "/" or ">"
template <typename C>
Py_ssize_t raw_end(const C *s, Py_ssize_t n, const std::string &name, Py_ssize_t at) {
  const Py_ssize_t m = static_cast<Py_ssize_t>(name.size());
  for (Py_ssize_t lt = find_ascii(s, n, at, "</"); lt >= 0; lt = find_ascii(s, n, lt + 1, "</")) {
    if (lt + 2 + m >= n) break;  // (the lookahead needs a character after the name)
    Py_ssize_t k = 0;
    while (k < m && ascii_lower(s[lt + 2 + k]) == static_cast<Py_UCS4>(name[k])) ++k;  // (raw names are ASCII)
    if (k == m && name_end(s[lt + 2 + m])) return lt;
  }
  return n;
}

// nesting.tag_name: how HTML's tokenizer reads the "<" at `lt` (with a character after it), for the tag walkers
// (nesting_walk, markup_walk): a tag whose name is [*first, the end returned), *closing for an end tag; or *first
// -1 and where the walk goes on, past what is not a tag (a comment, a bogus comment to the next ">", a "<" that
// opens nothing).
template <typename C>
Py_ssize_t tag_name(const C *s, Py_ssize_t n, Py_ssize_t lt, Py_ssize_t *first, bool *closing) {
  *first = -1;
  *closing = false;
  if (lt + 4 <= n && s[lt + 1] == '!' && s[lt + 2] == '-' && s[lt + 3] == '-') return comment_end(s, n, lt + 4);
  const Py_UCS4 c = s[lt + 1];
  const Py_ssize_t start = c == '/' ? lt + 2 : lt + 1;
  if (start >= n || !ascii_letter(s[start])) {
    if (c == '!' || c == '?' || c == '/') {  // a bogus comment, to the next ">"
      const Py_ssize_t close = find_char(s, n, lt + 1, '>');
      return close < 0 ? n : close + 1;
    }
    return lt + 1;
  }
  Py_ssize_t end = start;
  while (end < n && !name_end(s[end])) ++end;
  *first = start;
  *closing = c == '/';
  return end;
}

// One pass of nesting._walk: the depth (`flatten` false), or the pieces kept (`kept`: [start, end)
// ranges of the page, and -1 -1 for a "<br>").
template <typename C>
Py_ssize_t nesting_walk(const C *s, Py_ssize_t n, Py_ssize_t limit, bool flatten,
                        std::vector<std::pair<Py_ssize_t, Py_ssize_t>> *kept) {
  struct Open {
    std::string name;
    Py_ssize_t levels;
    unsigned flags;
  };
  std::vector<Open> stack;
  Py_ssize_t depth = 0, opened = 0, deepest = 2, copied = 0, broke = -1;
  Py_ssize_t foreign = 0;  // <svg> and <math> elements open
  Py_ssize_t selects = 0;  // <select> elements open: the parser ignores other end tags in them
  const Py_ssize_t unknown = -1;  // the depth of a page the walk cannot follow
  std::unordered_map<std::string, Py_ssize_t> active, dropped;
  auto pop_to = [&](size_t k) {
    for (size_t j = k; j < stack.size(); ++j) {
      depth -= stack[j].levels;
      if (stack[j].name == "select") --selects;
      if (stack[j].flags & kForeign) --foreign;
    }
    stack.resize(k);
  };
  auto leave_out = [&](Py_ssize_t start, Py_ssize_t end, unsigned flags) {
    kept->emplace_back(copied, start);
    if ((flags & kBlock) && broke != start) kept->emplace_back(-1, -1);
    copied = broke = end;
  };
  Py_ssize_t at = 0;
  std::string name;
  while (true) {
    const Py_ssize_t lt = find_char(s, n, at, '<');
    if (lt < 0 || lt + 1 >= n) break;
    // (a CDATA section ends at "]]>" in <svg> and <math>; elsewhere it is a bogus comment, to the next ">")
    if (!flatten && foreign > 0 && starts_with_ascii(s, n, lt, "<![CDATA[")) return unknown;
    Py_ssize_t first;
    bool closing;
    const Py_ssize_t end_of_name = tag_name(s, n, lt, &first, &closing);
    if (first < 0) {
      at = end_of_name;
      continue;
    }
    name.clear();
    for (Py_ssize_t k = first; k < end_of_name; ++k) append_code_point(name, s[k]);
    bool closes_itself;
    at = tag_end(s, n, end_of_name, &closes_itself);
    const unsigned flags = nesting_flag(name);
    if (flags & kNotCounted) continue;
    if (closing) {
      if (flatten) {
        auto found = dropped.find(name);
        if (found != dropped.end() && found->second > 0) {
          --found->second;
          leave_out(lt, at, flags);
          continue;
        }
      }
      if (selects > 0 && !(flags & kInSelect)) continue;
      for (Py_ssize_t k = static_cast<Py_ssize_t>(stack.size()) - 1; k >= 0; --k) {
        if (stack[k].name == name) {
          pop_to(static_cast<size_t>(k));
          break;
        }
        if (!(flags & kTableEnd) && (stack[k].flags & kScope)) break;
      }
      if (flags & kFormatting) {
        auto open = active.find(name);
        if (open != active.end() && open->second > 0) {
          --open->second;
          --opened;
        }
      }
      continue;
    }
    if (selects > 0 && (flags & kCloseSelect)) {  // (as its end tag; a <select> is not opened)
      size_t k = stack.size();
      while (stack[--k].name != "select") {
      }
      pop_to(k);
      if (name == "select") continue;
    }
    if ((flags & kVoid) || (closes_itself && ((flags & kForeign) || (foreign > 0 && !(flags & kBreakout))))) continue;
    const Py_ssize_t levels = name == "table" ? 3 : 1;
    if (flatten && depth + levels + opened + 2 > limit) {
      ++dropped[name];
      leave_out(lt, at, flags);
      continue;
    }
    stack.push_back({name, levels, flags});
    depth += levels;
    if (name == "select") ++selects;
    if (flags & kForeign) ++foreign;
    if (flags & kFormatting) {
      ++active[name];
      ++opened;
    }
    deepest = std::max(deepest, depth + opened + 2);
    if (!flatten && limit >= 0 && deepest > limit) return deepest;
    if (flags & kRaw) {
      const Py_ssize_t end = name == "plaintext" ? n : raw_end(s, n, name, at);
      if (foreign > 0) {  // (the parser reads its text as markup, but in an HTML element of <svg>'s <title> ...)
        if (!flatten && find_char(s, end, at, '<') >= 0) return unknown;
        if (flatten) continue;  // (flattening reads it as markup)
      } else if (!flatten && name == "script" && double_escaped(s, at, end)) {  // (it may read a "</script>" as text)
        return unknown;
      }
      at = end;
    }
  }
  if (flatten) kept->emplace_back(copied, n);
  return deepest;
}

template <typename C>
PyObject *markup_depth_of(const C *s, Py_ssize_t n, Py_ssize_t limit, int) {
  return PyLong_FromSsize_t(nesting_walk(s, n, limit, false, nullptr));
}

template <typename C>
PyObject *flatten_markup_of(const C *s, Py_ssize_t n, Py_ssize_t limit, int kind) {
  std::vector<std::pair<Py_ssize_t, Py_ssize_t>> kept;
  nesting_walk(s, n, limit, true, &kept);
  std::vector<C> out;
  for (const auto &piece : kept) {
    if (piece.first < 0)
      for (const char c : {'<', 'b', 'r', '>'}) out.push_back(static_cast<C>(c));
    else
      out.insert(out.end(), s + piece.first, s + piece.second);
  }
  // (the narrowest kind that holds the result, as for collapse_lines: equal strs have equal kinds)
  return PyUnicode_FromKindAndData(kind, out.data(), static_cast<Py_ssize_t>(out.size()));
}

template <PyObject *(*Of1)(const Py_UCS1 *, Py_ssize_t, Py_ssize_t, int),
          PyObject *(*Of2)(const Py_UCS2 *, Py_ssize_t, Py_ssize_t, int),
          PyObject *(*Of4)(const Py_UCS4 *, Py_ssize_t, Py_ssize_t, int)>
PyObject *nesting_call(PyObject *args, const char *format) {
  PyObject *text;
  Py_ssize_t limit = -1;
  if (!PyArg_ParseTuple(args, format, &text, &limit)) return nullptr;
  const void *data = PyUnicode_DATA(text);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
  switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND: return Of1(static_cast<const Py_UCS1 *>(data), n, limit, PyUnicode_1BYTE_KIND);
    case PyUnicode_2BYTE_KIND: return Of2(static_cast<const Py_UCS2 *>(data), n, limit, PyUnicode_2BYTE_KIND);
    default: return Of4(static_cast<const Py_UCS4 *>(data), n, limit, PyUnicode_4BYTE_KIND);
  }
}

PyObject *markup_depth(PyObject *, PyObject *args) {
  return nesting_call<markup_depth_of<Py_UCS1>, markup_depth_of<Py_UCS2>, markup_depth_of<Py_UCS4>>(args, "U|n");
}

PyObject *flatten_markup(PyObject *, PyObject *args) {
  return nesting_call<flatten_markup_of<Py_UCS1>, flatten_markup_of<Py_UCS2>, flatten_markup_of<Py_UCS4>>(args, "Un");
}

// ---------------------------------------------------------------------------------------
// extractors.markup: in one pass, the page with each tag's attributes past a bound left out, how many start
// tags it holds and how many attributes they keep (read_markup_python).

// markup._attributes: where the tag whose attributes start at `at` ends; where its attribute past `limit`
// starts in `*cut` (-1: none); its end in `*ending` (">", "/>", or "" at the page's end); how many it has in
// `*attributes`
template <typename C>
Py_ssize_t attributes_end(const C *s, Py_ssize_t n, Py_ssize_t at, Py_ssize_t limit, Py_ssize_t *cut,
                          const char **ending, Py_ssize_t *attributes) {
  Py_ssize_t &count = *attributes;
  count = 0;
  *cut = -1;
  while (at < n) {  // before an attribute's name
    const Py_UCS4 c = s[at];
    if (html_space(c)) {
      ++at;
      continue;
    }
    if (c == '/') {
      if (at + 1 < n && s[at + 1] == '>') {
        *ending = "/>";
        return at + 2;
      }
      ++at;
      continue;
    }
    if (c == '>') {
      *ending = ">";
      return at + 1;
    }
    if (++count == limit + 1) *cut = at;
    at = attribute_end(s, n, at + 1);  // (a name's first character may be "=", a quote, "<")
  }
  *ending = "";
  return n;
}

// markup.read_markup_python, in one pass: the start tags (and comments) counted, and their attributes kept (at most
// `attributes` a tag when not negative), stopping past `tags` start tags or `total` attributes (when not
// negative: the counts returned then are past them); and the pieces of a page whose tags have more than
// `attributes` attributes (`kept`: [start, end) ranges of the page, each followed by its tag's ending; empty
// when no tag has more)
template <typename C>
void markup_walk(const C *s, Py_ssize_t n, Py_ssize_t attributes, Py_ssize_t tags, Py_ssize_t total,
                 std::vector<std::tuple<Py_ssize_t, Py_ssize_t, const char *>> *kept, Py_ssize_t *counted,
                 Py_ssize_t *attributes_kept) {
  Py_ssize_t copied = 0, at = 0;
  Py_ssize_t open_p = 0;  // (<p> start tags not closed by a </p> yet)
  *counted = *attributes_kept = 0;
  std::string name;
  while (true) {
    const Py_ssize_t lt = find_char(s, n, at, '<');
    if (lt < 0 || lt + 1 >= n) break;
    Py_ssize_t first;
    bool closing;
    const Py_ssize_t end_of_name = tag_name(s, n, lt, &first, &closing);
    if (first < 0) {
      // a comment (or a bogus one, a doctype): a node of the tree, as an element is; "</>" makes none
      const bool empty_end_tag = end_of_name == lt + 3 && s[lt + 1] == '/' && s[lt + 2] == '>';
      if (end_of_name > lt + 1 && !empty_end_tag && ++*counted > tags && tags >= 0) {
        kept->clear();  // (stopped: the page is refused, not bounded)
        return;
      }
      at = end_of_name;
      continue;
    }
    Py_ssize_t cut, count;
    const char *ending;
    at = attributes_end(s, n, end_of_name, attributes, &cut, &ending, &count);
    if (cut >= 0) {  // (a tag the page's end cuts short stays unended: the tokenizer drops it)
      kept->emplace_back(copied, cut, ending);
      copied = at;
    }
    if (closing) {  // markup._end_tag_makes_element: </br> is a <br>, a </p> with no <p> open makes a <p>
      bool element = false;
      if (end_of_name - first == 2 && (s[first] | 0x20) == 'b' && (s[first + 1] | 0x20) == 'r') {
        element = true;
      } else if (end_of_name - first == 1 && (s[first] | 0x20) == 'p') {
        element = open_p == 0;
        if (open_p > 0) --open_p;
      }
      if (element && ++*counted > tags && tags >= 0) {
        kept->clear();  // (stopped: the page is refused, not bounded)
        return;
      }
      continue;
    }
    ++*counted;
    *attributes_kept += attributes >= 0 ? std::min(count, attributes) : count;
    if ((tags >= 0 && *counted > tags) || (total >= 0 && *attributes_kept > total)) {
      kept->clear();  // (stopped: the page is refused, not bounded)
      return;
    }
    name.clear();
    for (Py_ssize_t k = first; k < end_of_name; ++k) append_code_point(name, s[k]);
    if (end_of_name - first == 1 && (s[first] | 0x20) == 'p') ++open_p;
    if (nesting_flag(name) & kRaw) at = name == "plaintext" ? n : raw_end(s, n, name, at);
  }
  if (!kept->empty()) kept->emplace_back(copied, n, "");
}

template <typename C>
PyObject *read_markup_of(PyObject *text, const C *s, Py_ssize_t n, Py_ssize_t attributes, Py_ssize_t tags,
                         Py_ssize_t total, int kind) {
  std::vector<std::tuple<Py_ssize_t, Py_ssize_t, const char *>> kept;
  Py_ssize_t counted, attributes_kept;
  markup_walk(s, n, attributes, tags, total, &kept, &counted, &attributes_kept);
  PyObject *page;
  if (kept.empty()) {  // (an ordinary page, or one refused: the same str)
    Py_INCREF(text);
    page = text;
  } else {
    std::vector<C> out;
    for (const auto &piece : kept) {
      out.insert(out.end(), s + std::get<0>(piece), s + std::get<1>(piece));
      for (const char *e = std::get<2>(piece); *e != '\0'; ++e) out.push_back(static_cast<C>(*e));
    }
    page = PyUnicode_FromKindAndData(kind, out.data(), static_cast<Py_ssize_t>(out.size()));
    if (page == nullptr) return nullptr;
  }
  return Py_BuildValue("Nnn", page, counted, attributes_kept);
}

PyObject *read_markup(PyObject *, PyObject *args) {
  PyObject *text;
  Py_ssize_t attributes = -1, tags = -1, total = -1;
  if (!PyArg_ParseTuple(args, "U|nnn", &text, &attributes, &tags, &total)) return nullptr;
  const void *data = PyUnicode_DATA(text);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
  switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
      return read_markup_of(text, static_cast<const Py_UCS1 *>(data), n, attributes, tags, total,
                            PyUnicode_1BYTE_KIND);
    case PyUnicode_2BYTE_KIND:
      return read_markup_of(text, static_cast<const Py_UCS2 *>(data), n, attributes, tags, total,
                            PyUnicode_2BYTE_KIND);
    default:
      return read_markup_of(text, static_cast<const Py_UCS4 *>(data), n, attributes, tags, total,
                            PyUnicode_4BYTE_KIND);
  }
}

PyMethodDef module_methods[] = {
    {"set_sentence_breaker", set_sentence_breaker, METH_O,
     "set_sentence_breaker(address): BlingFire's TextToSentencesWithOffsets (a C function address)"},
    {"keep_region", keep_region, METH_VARARGS,
     "keep_region(ids, logprobs, tokens, threshold, negative_cap, short_block) -> [bool]: decide.keep_region"},
    {"keep_trim", keep_trim, METH_VARARGS,
     "keep_trim(ids, logprobs, tokens, threshold, max_tokens, relative) -> [bool]: decide.keep_trim"},
    {"sample_lines", sample_lines, METH_VARARGS,
     "sample_lines(text, limit) -> str: language.sample_for_identification"},
    {"split", split, METH_VARARGS,
     "split(text, max_chars) -> (spans, block ids): sentences.split_sentences and sentences.block_ids"},
    {"utf8_text", utf8_text, METH_O,
     "utf8_text(data) -> str(data, 'utf-8') with its UTF-8 form kept, or None if data is not valid UTF-8"},
    {"page_units", page_units, METH_VARARGS,
     "page_units(text, buffer) -> (kind, length, utf8 size) of text's code units (and UTF-8 form) written there"},
    {"page_text", page_text, METH_VARARGS,
     "page_text(buffer, kind, length, utf8 size) -> the str page_units wrote, its UTF-8 form kept"},
    {"has_utf8_form", has_utf8_form, METH_O,
     "has_utf8_form(text) -> whether the (non-ASCII) str holds its UTF-8 form, so no lone surrogate"},
    {"count_words", count_words, METH_O, "count_words(text) -> len(text.split())"},
    {"count_nonspace", count_nonspace, METH_O, "count_nonspace(text) -> len(''.join(text.split()))"},
    {"count_marked_words", count_marked_words, METH_O,
     "count_marked_words(text) -> its words, resiliparse's list marks not counted (extractors.text.marked_words)"},
    {"find_all", find_all, METH_VARARGS,
     "find_all(text, needle, limit=-1) -> every position where needle starts in text (the first limit ones)"},
    {"collapse_lines", collapse_lines, METH_O,
     "collapse_lines(text) -> one line per block, whitespace collapsed, no empty lines (extractors.text.lines)"},
    {"markup_depth", markup_depth, METH_VARARGS,
     "markup_depth(html, limit=-1) -> how deep the HTML parser may nest html (extractors.nesting)"},
    {"flatten_markup", flatten_markup, METH_VARARGS,
     "flatten_markup(html, limit) -> html without the tags markup_depth counts past limit (extractors.nesting)"},
    {"read_markup", read_markup, METH_VARARGS,
     "read_markup(html, attributes=-1, tags=-1, total=-1) -> (html without each tag's attributes past attributes, "
     "its start tags, their attributes), stopping past tags or total (extractors.markup)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_native",
                          "Compiled hot path of plexity_plugins (see native/plexity_native.cpp).", -1,
                          module_methods};

bool add_type(PyObject *module, PyTypeObject *type, const char *name, const char *qualname, Py_ssize_t size,
              destructor dealloc, initproc init, PyMethodDef *methods, PyGetSetDef *getset, const char *doc) {
  type->tp_name = qualname;
  type->tp_basicsize = size;
  type->tp_flags = Py_TPFLAGS_DEFAULT;
  type->tp_new = PyType_GenericNew;
  type->tp_dealloc = dealloc;
  type->tp_init = init;
  type->tp_methods = methods;
  type->tp_getset = getset;
  type->tp_doc = doc;
  if (PyType_Ready(type) < 0) return false;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, reinterpret_cast<PyObject *>(type)) < 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

}  // namespace

bool add_learned_reader(PyObject *module);  // native/learned_reader.cpp

#ifndef PLEXITY_NATIVE_SOURCES  // (setup.py defines it: plexity_plugins/runtime/native_sources.py)
#define PLEXITY_NATIVE_SOURCES ""
#endif

PyMODINIT_FUNC PyInit__native(void) {
  PyObject *module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  if (!add_type(module, &ModelType, "Model", "plexity_plugins.runtime._native.Model", sizeof(ModelObject),
                reinterpret_cast<destructor>(Model_dealloc), reinterpret_cast<initproc>(Model_init),
                Model_methods, Model_getset, "Model(path): a KenLM model (binary or ARPA), memory-mapped") ||
      !add_type(module, &WalkerType, "LangidWalker", "plexity_plugins.runtime._native.LangidWalker", sizeof(WalkerObject),
                reinterpret_cast<destructor>(Walker_dealloc), reinterpret_cast<initproc>(Walker_init),
                Walker_methods, nullptr, "LangidWalker(nextmove, rowbase, output): py3langid's DFA tables") ||
      !add_type(module, &WordCounterType, "WordCounter", "plexity_plugins.runtime._native.WordCounter",
                sizeof(WordCounterObject), reinterpret_cast<destructor>(WordCounter_dealloc),
                reinterpret_cast<initproc>(WordCounter_init), WordCounter_methods, nullptr,
                "WordCounter(words): counts words of a set in text") ||
      !add_learned_reader(module) || PyModule_AddStringConstant(module, "SOURCES", PLEXITY_NATIVE_SOURCES) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  static bool hooked = false;  // (a module initialised again, in a subinterpreter: hooked once)
  if (!hooked) {
    hooked = true;
    Py_AtExit(plexity::wait_for_working_threads);
    pthread_atfork(nullptr, nullptr, plexity::forget_working_threads);
  }
  return module;
}
