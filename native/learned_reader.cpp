// plexity_plugins.runtime._native, the learned reader's part: a page's blocks, their features and
// the forest that labels them, in one pass over the page's HTML.
//
// A port of plexity_plugins/extractors/learned/ (the reference; its docstrings specify the
// procedure).  Each function gives exactly the reference's result (tests/test_learned_native.py):
//
//   segment_html(html) -> Page          segment.segment: Page.texts(), .title, .chars, .truncated,
//                                       .declared, .summaries, and for the tests .blocks() /
//                                       .elements() (the fields of segment's Block and Element, in
//                                       their __slots__ order)
//   Page.features(declares_item, logprobs) -> bytes
//                                       features.block_features, row-major float64 (n x FEATURE_COUNT),
//                                       every value bit-equal (same operations in the same order,
//                                       libm's log1p as Python's math.log1p)
//   Forest(spec).probabilities(rows, n_features) -> [float]
//                                       forest.Forest(spec).probabilities (its trees, and its linear
//                                       model where it has one)
//   unescape_html(text)                 segment.unescape (html.unescape)
//   second_look_rows(rows, width, probabilities, words, spread, looked) -> bytes
//                                       second_look.neighbour_rows of the looked blocks
//   LearnedChooser(forest, page_forest, second_forest, policy).kept(rows, width, section_ends) -> [bool]
//                                       learned.kept: the page's threshold, its second look and the
//                                       rules of `choose` (learned/__init__.py gives the policy)
//
// Character classes are CPython's own (Py_UNICODE_IS*), the ones `re` uses for \w, \s, \d and
// str.split() for whitespace; re.IGNORECASE's extra equivalences (i: U+0130, U+0131; s: U+017F;
// k: U+212A) are spelled out where the reference matches ASCII names case-insensitively.
// html.unescape's tables are read from Python's html module on first use (html.entities.html5,
// and the numeric references html.unescape maps specially, asked of html.unescape itself).
// JSON-LD strings are decoded as CPython's json.loads decodes them (its C scanstring, strict).
//
// Bounded like the reference: the stack of open elements is at most kMaxDepth deep (inline ones
// kMaxInlineDepth), an end tag
// searches at most kMaxCloseSearch open elements, a page is read up to kMaxBlocks blocks or
// kMaxElements elements, every scan moves forward (linear in the page: a JSON-LD script's strings
// too, however many keys it holds or however long a string that never ends).  Text is held once:
// a block's pieces are unescaped and collapsed in place, then moved to the block.
// Segmentation and features run without the GIL; it is taken back only to lower-case a tag name
// that is not ASCII (str.lower, with its full case mapping).

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "gil_release.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace {

constexpr int kMaxDepth = 256;        // segment.MAX_DEPTH
constexpr int kMaxInlineDepth = 240;  // segment.MAX_INLINE_DEPTH
constexpr int kMaxCloseSearch = 64;   // segment.MAX_CLOSE_SEARCH
constexpr size_t kMaxBlocks = 50000;      // segment.MAX_BLOCKS
constexpr size_t kMaxElements = 200000;   // segment.MAX_ELEMENTS
constexpr int kFeatureCount = 146;    // len(features.FEATURES)
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------
// Character classes (re's \s, \w, \d; str.split()'s whitespace)

inline bool is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }
inline bool is_word(Py_UCS4 c) {
  if (c < 128) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return Py_UNICODE_ISALNUM(c) || c == '_';
}
// text._HAN: Han and kana, whose runs segment.count_words counts as a word per kCharsPerHanWord characters
inline bool is_han(Py_UCS4 c) {
  return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2FA1F);
}
constexpr int64_t kCharsPerHanWord = 2;  // text.CHARS_PER_HAN_WORD
// The words beyond one of a run of `run` Han or kana characters (text.han_extra).
inline int64_t han_extra(int64_t run) { return run > 0 ? (run + kCharsPerHanWord - 1) / kCharsPerHanWord - 1 : 0; }
inline bool is_decimal(Py_UCS4 c) { return c < 128 ? (c >= '0' && c <= '9') : Py_UNICODE_ISDECIMAL(c) != 0; }
inline bool is_ascii_alpha(Py_UCS4 c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline Py_UCS4 ascii_lower(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Whether c matches the ASCII lower-case letter (or other ASCII character) `want` under
// re.IGNORECASE for a str pattern.
inline bool ci_equal(Py_UCS4 c, char want) {
  if (c < 128) return ascii_lower(c) == static_cast<Py_UCS4>(want);
  switch (want) {
    case 'i': return c == 0x130 || c == 0x131;
    case 's': return c == 0x17F;
    case 'k': return c == 0x212A;
    default: return false;
  }
}

// A stop that ends a sentence (features._STOPS, segment._SENTENCE_END): [.!?。！？।؟]
inline bool is_stop(Py_UCS4 c) {
  return c == '.' || c == '!' || c == '?' || c == 0x3002 || c == 0xFF01 || c == 0xFF1F || c == 0x964 || c == 0x61F;
}
// features._SEPARATORS: [|·•»›/\-–—:]
inline bool is_separator(Py_UCS4 c) {
  return c == '|' || c == 0xB7 || c == 0x2022 || c == 0xBB || c == 0x203A || c == '/' || c == '-' || c == 0x2013 ||
         c == 0x2014 || c == ':';
}
// features._UPPER_INITIAL's letters: [A-ZÀ-ÖØ-Þ]
inline bool is_upper_initial(Py_UCS4 c) {
  return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xDE);
}

typedef std::u32string Text;

// ---------------------------------------------------------------------------------------
// html.unescape

struct Entities {
  // html.entities.html5 as a trie over its (ASCII) names
  std::unordered_map<uint64_t, int32_t> edges;  // (node << 8 | char) -> child node
  std::vector<int32_t> value_of;                 // node -> index into values, or -1
  std::vector<Text> values;
  // numeric references html.unescape does not map to chr(n) (its _invalid_charrefs and
  // _invalid_codepoints, below U+10FFFF and outside the surrogates)
  std::unordered_map<uint32_t, Text> special;

  int32_t child(int32_t node, Py_UCS4 c) const {
    if (c >= 128) return -1;
    auto it = edges.find((static_cast<uint64_t>(node) << 8) | c);
    return it == edges.end() ? -1 : it->second;
  }
};

const Entities *g_entities = nullptr;

bool to_text(PyObject *str, Text &out) {
  if (!PyUnicode_Check(str)) {
    PyErr_SetString(PyExc_TypeError, "expected str");
    return false;
  }
  const int kind = PyUnicode_KIND(str);
  const void *data = PyUnicode_DATA(str);
  const Py_ssize_t n = PyUnicode_GET_LENGTH(str);
  out.clear();
  out.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) out.push_back(PyUnicode_READ(kind, data, i));
  return true;
}

PyObject *from_text(const char32_t *data, size_t n) {
  return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, data, static_cast<Py_ssize_t>(n));
}

// Reads the tables from Python's html module (with the GIL, once).
bool load_entities() {
  if (g_entities != nullptr) return true;
  std::unique_ptr<Entities> e(new Entities);
  e->value_of.push_back(-1);  // the root
  PyObject *module = PyImport_ImportModule("html.entities");
  if (module == nullptr) return false;
  PyObject *html5 = PyObject_GetAttrString(module, "html5");
  Py_DECREF(module);
  if (html5 == nullptr) return false;
  if (!PyDict_Check(html5)) {
    Py_DECREF(html5);
    PyErr_SetString(PyExc_TypeError, "html.entities.html5 is not a dict");
    return false;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  Text name, replacement;
  while (PyDict_Next(html5, &pos, &key, &value)) {
    if (!to_text(key, name) || !to_text(value, replacement)) {
      Py_DECREF(html5);
      return false;
    }
    int32_t node = 0;
    bool ascii = true;
    for (Py_UCS4 c : name) {
      if (c >= 128) {
        ascii = false;
        break;
      }
      const uint64_t edge = (static_cast<uint64_t>(node) << 8) | c;
      auto it = e->edges.find(edge);
      if (it == e->edges.end()) {
        const int32_t made = static_cast<int32_t>(e->value_of.size());
        e->value_of.push_back(-1);
        e->edges.emplace(edge, made);
        node = made;
      } else {
        node = it->second;
      }
    }
    if (!ascii) continue;  // (none is: a name html.unescape's pattern could match is what counts)
    e->value_of[node] = static_cast<int32_t>(e->values.size());
    e->values.push_back(replacement);
  }
  Py_DECREF(html5);
  // The numbers html.unescape maps to something other than chr(n): C0 and C1 controls, the
  // non-characters U+FDD0..U+FDEF and U+nFFFE, U+nFFFF (asked of html.unescape itself).
  PyObject *html = PyImport_ImportModule("html");
  if (html == nullptr) return false;
  PyObject *unescape = PyObject_GetAttrString(html, "unescape");
  Py_DECREF(html);
  if (unescape == nullptr) return false;
  std::vector<uint32_t> candidates;
  for (uint32_t c = 0; c <= 0x9F; ++c) candidates.push_back(c);
  for (uint32_t c = 0xFDD0; c <= 0xFDEF; ++c) candidates.push_back(c);
  for (uint32_t plane = 0; plane <= 0x10; ++plane) {
    candidates.push_back(plane * 0x10000 + 0xFFFE);
    candidates.push_back(plane * 0x10000 + 0xFFFF);
  }
  for (uint32_t c : candidates) {
    char ref[32];
    snprintf(ref, sizeof ref, "&#%u;", c);
    PyObject *result = PyObject_CallFunction(unescape, "s", ref);
    if (result == nullptr || !to_text(result, replacement)) {
      Py_XDECREF(result);
      Py_DECREF(unescape);
      return false;
    }
    Py_DECREF(result);
    if (!(replacement.size() == 1 && replacement[0] == c)) e->special.emplace(c, replacement);
  }
  Py_DECREF(unescape);
  g_entities = e.release();
  return true;
}

inline bool is_hex(Py_UCS4 c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline uint32_t hex_value(Py_UCS4 c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }
// html.unescape's named reference: [^\t\n\f <&#;]
inline bool is_ref_name_char(Py_UCS4 c) {
  return !(c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';');
}

// The first i in [from, to) where s[i] == c, else `to`: memchr for a str of one byte a character,
// 8 (two bytes) or 4 (four bytes) characters a compare where SSE2 is there (every x86-64): a news
// page is mostly two bytes a character (one curly quote makes it so), and the segmenter's scans
// for "<", ">", quotes and "&" cross all of it.
template <class CharT>
inline size_t find_unit(const CharT *s, size_t from, size_t to, CharT c) {
  if (from >= to) return to;
  if (sizeof(CharT) == 1) {
    const void *hit = std::memchr(s + from, static_cast<int>(c), to - from);
    return hit == nullptr ? to : static_cast<size_t>(static_cast<const CharT *>(hit) - s);
  }
  size_t i = from;
#if defined(__SSE2__)
  constexpr size_t kPer = 16 / sizeof(CharT);
  const __m128i needle = sizeof(CharT) == 2 ? _mm_set1_epi16(static_cast<short>(c))
                                            : _mm_set1_epi32(static_cast<int>(c));
  for (; i + 2 * kPer <= to; i += 2 * kPer) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + kPer));
    const __m128i ea = sizeof(CharT) == 2 ? _mm_cmpeq_epi16(a, needle) : _mm_cmpeq_epi32(a, needle);
    const __m128i eb = sizeof(CharT) == 2 ? _mm_cmpeq_epi16(b, needle) : _mm_cmpeq_epi32(b, needle);
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(ea)) |
                          (static_cast<unsigned>(_mm_movemask_epi8(eb)) << 16);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask)) / sizeof(CharT);
  }
#endif
  for (; i < to; ++i)
    if (s[i] == c) return i;
  return to;
}

// html.unescape(s[start:end]) appended to out (its pattern and replacement rules, read left to
// right: a numeric reference, else a named one of at most 32 characters, the longest known
// prefix of it when the whole is not a name).
template <class CharT>
void unescape(const CharT *s, size_t start, size_t end, Text &out) {
  const Entities &ent = *g_entities;
  size_t i = start;
  while (i < end) {
    const Py_UCS4 c = s[i];
    if (c != '&') {
      out.push_back(c);
      ++i;
      continue;
    }
    const size_t j = i + 1;
    if (j < end && s[j] == '#') {
      size_t k = j + 1;
      bool decimal = k < end && s[k] >= '0' && s[k] <= '9';
      bool hex = !decimal && k + 1 < end && (s[k] == 'x' || s[k] == 'X') && is_hex(s[k + 1]);
      if (!decimal && !hex) {
        out.push_back('&');
        ++i;
        continue;
      }
      if (hex) ++k;
      size_t e = k;
      while (e < end && (decimal ? (s[e] >= '0' && s[e] <= '9') : is_hex(s[e]))) ++e;
      size_t first = k;
      while (first < e && s[first] == '0') ++first;
      // more than 7 decimal (6 hex) significant digits: past U+10FFFF
      const bool huge = (e - first) > (decimal ? 7u : 6u);
      uint32_t number = 0;
      if (!huge) {
        for (size_t d = first; d < e; ++d) number = decimal ? number * 10 + (s[d] - '0') : number * 16 + hex_value(s[d]);
      }
      auto special = huge ? ent.special.end() : ent.special.find(number);
      if (special != ent.special.end()) {
        out += special->second;
      } else if (huge || (number >= 0xD800 && number <= 0xDFFF) || number > 0x10FFFF) {
        out.push_back(0xFFFD);
      } else {
        out.push_back(number);
      }
      i = e + (e < end && s[e] == ';' ? 1 : 0);
      continue;
    }
    size_t e = j;
    while (e < end && e - j < 32 && is_ref_name_char(s[e])) ++e;
    if (e == j) {
      out.push_back('&');
      ++i;
      continue;
    }
    const size_t length = e - j + (e < end && s[e] == ';' ? 1 : 0);
    int32_t node = 0, full = -1, best_value = -1;
    size_t best_length = 0;
    for (size_t d = 0; d < length; ++d) {
      node = ent.child(node, s[j + d]);
      if (node < 0) break;
      const int32_t v = ent.value_of[node];
      if (v < 0) continue;
      if (d + 1 == length) {
        full = v;
      } else if (d + 1 >= 2) {
        best_value = v;
        best_length = d + 1;
      }
    }
    if (full >= 0) {
      out += ent.values[full];
    } else if (best_value >= 0) {
      out += ent.values[best_value];
      for (size_t d = best_length; d < length; ++d) out.push_back(s[j + d]);
    } else {
      out.push_back('&');
      for (size_t d = 0; d < length; ++d) out.push_back(s[j + d]);
    }
    i = j + length;
  }
}

// ---------------------------------------------------------------------------------------
// The tag vocabulary (segment.py, features.py)

enum TagFlag : uint32_t {
  kBlock = 1, kVoid = 2, kRaw = 4, kClosesP = 8,
  kScopeP = 16,       // the scope of an implied </p>: button table td th body html
  kScopeList = 32,    // of </li>: ul ol menu dir table body html (segment._LIST_SCOPE)
  kScopeDl = 64,      // of </dt>, </dd>: dl body html
  kScopeCell = 128,   // of </td>, </th>: table body html tr (segment._TABLE_SCOPE | {"tr"})
  kScopeTable = 256,  // of </tr>: table body html (segment._TABLE_SCOPE)
  kScopeSelect = 512, // of </option>: select body html
  kAnnotation = 1024, // segment.ANNOTATION_TAGS: rt rp
};

struct TagInfo {
  uint32_t flags = 0;
  int32_t feature_id = 0;   // segment.TAG_ID (0: any other tag)
  int32_t counted = -1;     // its index in segment.COUNTED_TAGS (-1: not counted)
  uint32_t inline_bits = 0; // segment.INLINE_BITS
  uint32_t ancestry = 0;    // features._ANCESTRY
};

// Known tags; the first ones have fixed ids for the procedure.
enum KnownTag : int32_t {
  T_ROOT, T_A, T_PRE, T_BR, T_P, T_LI, T_DT, T_DD, T_TD, T_TH, T_TR, T_OPTION, T_OPTGROUP, T_TITLE, T_SCRIPT, T_META,
  T_LINK, T_NOSCRIPT, T_FIXED_END
};
const char *const kFixedNames[] = {"#root", "a", "pre", "br", "p", "li", "dt", "dd", "td", "th", "tr", "option",
                                   "optgroup", "title", "script", "meta", "link", "noscript"};

const char kBlockTags[] =
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset figcaption "
    "figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li listing main menu nav ol "
    "noscript optgroup option p pre search section summary table tbody td tfoot th thead tr ul";
const char kVoidTags[] = "area base br col embed hr img input keygen link meta param source track wbr";
const char kRawTags[] = "script style textarea title xmp iframe noembed noframes template plaintext svg math";
const char kAnnotationTags[] = "rt rp";
const char kClosesPTags[] =
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section summary table "
    "ul li dd dt";
const char kCountedTags[] = "article h2 time input img li p";  // segment.COUNTED_TAGS, in order
const char kFeatureTags[] =  // segment.TAGS, in order (its index is the tag's feature)
    "other a address article aside b blockquote body button caption center code dd details div dl dt em "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header html i label legend li main nav ol "
    "option p pre section select small span strong summary table tbody td th time tr u ul cite font dialog "
    "menu hgroup search thead tfoot noscript";

struct NameKey {  // an ASCII name of at most 16 characters
  uint64_t lo = 0, hi = 0;
  uint32_t length = 0;
  bool operator==(const NameKey &o) const { return lo == o.lo && hi == o.hi && length == o.length; }
};
struct NameKeyHash {
  size_t operator()(const NameKey &k) const {
    uint64_t h = k.lo * 0x9E3779B97F4A7C15ULL ^ (k.hi + 0x632BE59BD9B4E019ULL + (h_len(k) << 6));
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return static_cast<size_t>(h ^ (h >> 32));
  }
  static uint64_t h_len(const NameKey &k) { return k.length; }
};

// Packs an ASCII name (already lower-cased) into a key; false if it is longer than 16 or not ASCII.
template <class It>
bool make_key(It begin, size_t length, NameKey &key) {
  if (length > 16) return false;
  key = NameKey();
  key.length = static_cast<uint32_t>(length);
  for (size_t i = 0; i < length; ++i) {
    const Py_UCS4 c = begin[i];
    if (c >= 128) return false;
    if (i < 8)
      key.lo |= static_cast<uint64_t>(c) << (8 * i);
    else
      key.hi |= static_cast<uint64_t>(c) << (8 * (i - 8));
  }
  return true;
}

// f(name) for each space-separated name of `list`
template <class F>
void each_name(const char *list, F f) {
  std::string name;
  for (const char *p = list;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!name.empty()) f(name);
      name.clear();
      if (*p == '\0') break;
    } else {
      name.push_back(*p);
    }
  }
}

struct Vocabulary {
  std::unordered_map<NameKey, int32_t, NameKeyHash> ids;
  std::vector<std::string> names;
  std::vector<TagInfo> info;

  int32_t add(const std::string &name) {
    NameKey key;
    make_key(name.begin(), name.size(), key);
    auto it = ids.find(key);
    if (it != ids.end()) return it->second;
    const int32_t id = static_cast<int32_t>(names.size());
    ids.emplace(key, id);
    names.push_back(name);
    info.emplace_back();
    return id;
  }
  template <class F>
  void each(const char *list, F f) {
    each_name(list, [&](const std::string &name) { f(add(name), name); });
  }

  Vocabulary() {
    for (const char *name : kFixedNames) add(name);
    each(kBlockTags, [&](int32_t id, const std::string &) { info[id].flags |= kBlock; });
    each(kVoidTags, [&](int32_t id, const std::string &) { info[id].flags |= kVoid; });
    each(kRawTags, [&](int32_t id, const std::string &) { info[id].flags |= kRaw; });
    each(kAnnotationTags, [&](int32_t id, const std::string &) { info[id].flags |= kAnnotation; });
    each(kClosesPTags, [&](int32_t id, const std::string &) { info[id].flags |= kClosesP; });
    each("button table td th body html", [&](int32_t id, const std::string &) { info[id].flags |= kScopeP; });
    each("ul ol menu dir table body html", [&](int32_t id, const std::string &) { info[id].flags |= kScopeList; });
    each("dl body html", [&](int32_t id, const std::string &) { info[id].flags |= kScopeDl; });
    each("table body html tr", [&](int32_t id, const std::string &) { info[id].flags |= kScopeCell; });
    each("table body html", [&](int32_t id, const std::string &) { info[id].flags |= kScopeTable; });
    each("select body html", [&](int32_t id, const std::string &) { info[id].flags |= kScopeSelect; });
    int32_t feature = 0;
    each(kFeatureTags, [&](int32_t id, const std::string &) { info[id].feature_id = feature++; });
    int32_t counted = 0;
    each(kCountedTags, [&](int32_t id, const std::string &) { info[id].counted = counted++; });
    const std::pair<const char *, uint32_t> inline_bits[] = {
        {"a", 1}, {"b", 2}, {"strong", 2}, {"em", 4}, {"i", 4}, {"button", 8}, {"label", 8}, {"select", 8},
        {"time", 16}, {"small", 32}, {"code", 64}, {"cite", 128}, {"h1", 256}, {"h2", 256}, {"h3", 256},
        {"h4", 256}, {"h5", 256}, {"h6", 256}};
    for (const auto &p : inline_bits) info[add(p.first)].inline_bits = p.second;
    const std::pair<const char *, uint32_t> ancestry[] = {
        {"article", 1}, {"main", 2}, {"nav", 4}, {"aside", 8}, {"header", 16}, {"footer", 32}, {"form", 64},
        {"li", 128}, {"td", 256}, {"th", 256}, {"blockquote", 512}, {"figure", 1024}, {"dialog", 2048},
        {"table", 4096}, {"h1", 8192}, {"h2", 8192}, {"h3", 8192}, {"h4", 8192}, {"h5", 8192}, {"h6", 8192},
        {"pre", 16384}, {"select", 32768}, {"button", 32768}, {"label", 32768}, {"dl", 65536},
        {"noscript", 1u << 19}};
    for (const auto &p : ancestry) info[add(p.first)].ancestry = p.second;
  }
};

const Vocabulary *g_vocabulary = nullptr;

// segment.ROLE_IDS
int role_id(const Text &role) {
  static const std::pair<const char *, int> roles[] = {
      {"main", 1}, {"article", 2}, {"navigation", 3}, {"complementary", 4}, {"banner", 5}, {"contentinfo", 6},
      {"menu", 7}, {"menubar", 7}, {"list", 8}, {"listitem", 8}, {"dialog", 9}, {"alertdialog", 9},
      {"search", 3}, {"tablist", 7}, {"tab", 7}, {"button", 10}, {"link", 10}};
  for (const auto &r : roles) {
    const size_t length = std::strlen(r.first);
    if (length == role.size() && std::equal(role.begin(), role.end(), r.first)) return r.second;
  }
  return 0;
}

// features._ROLE_BITS
uint32_t role_bits(int role) {
  switch (role) {
    case 1: return 2;
    case 2: return 1;
    case 3: return 4;
    case 4: return 8;
    case 5: return 16;
    case 6: return 32;
    case 9: return 2048;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------------------
// The page (segment.Page)

struct Element {  // segment.Element
  int32_t tag, parent, signature, depth;
  bool block, hidden, declared;
  uint8_t role;
  int32_t words, link_words, chars, blocks, long_blocks, long_words, elements, links, first_block, last_block;
};

struct Block {  // segment.Block
  Text text;
  int32_t element, words, link_words, chars, links, inline_bits, lines;
};

struct Signature {  // segment.Element.signature: its tag, and " " + its classes if it has a class attribute
  int32_t tag;            // (-1: the root's, "")
  const Text *classes;    // (the key of Segmenter::class_signatures_ that holds them after the tag), or null
};

constexpr int kSchemaFamilies = 7;    // len(segment.SCHEMA_FAMILIES)
constexpr int kCountedTagCount = 7;   // len(segment.COUNTED_TAGS)

// segment.SCHEMA_FAMILY: schema.org type names (ASCII lower case) by family
const std::unordered_map<std::string, int> &schema_families() {
  static const std::unordered_map<std::string, int> families = [] {
    static const char *const names[kSchemaFamilies] = {
        "article newsarticle blogposting report scholarlyarticle techarticle blog liveblogposting "
        "opinionnewsarticle analysisnewsarticle reportagenewsarticle socialmediaposting",
        "product offer aggregateoffer productgroup vehicle book softwareapplication individualproduct",
        "itemlist collectionpage searchresultspage offercatalog",
        "discussionforumposting qapage question answer comment",
        "faqpage howto recipe howtostep",
        "service localbusiness organization contactpage aboutpage restaurant event place course jobposting person",
        "webpage website breadcrumblist sitenavigationelement"};
    std::unordered_map<std::string, int> out;
    for (int k = 0; k < kSchemaFamilies; ++k) each_name(names[k], [&](const std::string &name) { out.emplace(name, k); });
    return out;
  }();
  return families;
}

struct PageData {
  std::vector<Element> elements;
  std::vector<Block> blocks;
  Text title;
  int64_t chars = 0;
  bool truncated = false;
  std::vector<Text> declared;    // segment.Page.declared: a JSON-LD script's articleBody / text strings
  std::vector<Text> summaries;   // segment.Page.summaries: the <meta> descriptions' contents
  Text og_type, canonical, og_url;  // segment.Page's, as it reads them
  int64_t schema_counts[kSchemaFamilies] = {};  // segment.Page.schema_counts
  int64_t tag_counts[kCountedTagCount] = {};    // segment.Page.tag_counts
  std::vector<Text> extra_tags;  // names of tags outside the vocabulary (ids from the vocabulary's size on)
  std::vector<Signature> signatures;
  // the keys of class_signatures: the tag id, then the classes (their nodes do not move)
  std::unordered_map<Text, int32_t> class_signatures;

  std::u32string_view text(const Block &b) const { return std::u32string_view(b.text); }
  Text tag_name(int32_t tag) const {
    const auto &known = g_vocabulary->names;
    if (tag < static_cast<int32_t>(known.size())) return Text(known[tag].begin(), known[tag].end());
    return extra_tags[tag - known.size()];
  }
};

using plexity::GilRelease;  // (native/gil_release.h)

// Lower-cases a tag name that is not ASCII with str.lower (the GIL taken back for it); false with a
// Python error set on failure.
bool python_lower(GilRelease &gil, const Text &name, Text &out) {
  return gil.with_gil([&]() {
    PyObject *str = from_text(name.data(), name.size());
    if (str == nullptr) return false;
    PyObject *lower = PyObject_CallMethod(str, "lower", nullptr);
    Py_DECREF(str);
    if (lower == nullptr) return false;
    const bool ok = to_text(lower, out);
    Py_DECREF(lower);
    return ok;
  });
}

// ---------------------------------------------------------------------------------------
// Segmentation (segment.segment and segment._Reader)

template <class CharT>
class Segmenter {
 public:
  Segmenter(const CharT *s, size_t n, PageData &page, GilRelease &gil)
      : s_(s), n_(n), page_(page), gil_(gil), vocabulary_(*g_vocabulary) {}

  // false with a Python error set (when lower-casing a tag name failed)
  bool run() {
    Element root = {};
    root.tag = T_ROOT;
    root.parent = -1;
    root.signature = static_cast<int32_t>(page_.signatures.size());  // the root's is "" (it has no group)
    page_.signatures.push_back(Signature{-1, nullptr});
    root.block = true;
    root.first_block = root.last_block = -1;
    page_.elements.push_back(root);
    stack_.push_back(0);
    block_of_.push_back(0);
    const size_t n = n_;
    size_t at = 0;
    // (segment.py) open <noscript> elements, and where the next "</noscript" starts
    size_t in_noscript = 0, noscript_end = npos;
    while (at < n) {
      if (page_.blocks.size() >= kMaxBlocks || page_.elements.size() >= kMaxElements) {
        page_.truncated = true;
        break;
      }
      const size_t lt = find(static_cast<CharT>('<'), at);
      if (lt == npos) {
        add_text(at, n);
        break;
      }
      if (lt > at) add_text(at, lt);
      const size_t past = past_markup(lt);
      if (past != npos) {
        at = past;
        continue;
      }
      const bool closing = lt + 1 < n && s_[lt + 1] == '/';
      const size_t start = closing ? lt + 2 : lt + 1;
      if (start >= n || !is_ascii_alpha(s_[start])) {  // a "<" that starts no tag is text
        add_text('<');
        at = lt + 1;
        continue;
      }
      size_t name_end = start;
      while (name_end < n && s_[name_end] != '/' && s_[name_end] != '>' && !is_space(s_[name_end])) ++name_end;
      int32_t tag;
      if (!intern_tag(start, name_end, &tag)) return false;
      const size_t end = tag_end(name_end);
      const size_t attributes_end = std::min(end, n);
      at = end >= n ? n : end + 1;
      if (closing) {
        if (tag == T_NOSCRIPT && in_noscript > 0) --in_noscript;
        close(tag);
        continue;
      }
      if (tag == T_NOSCRIPT) ++in_noscript;
      if (info(tag).flags & kRaw) {
        const std::string &name = vocabulary_.names[tag];
        if ((name == "svg" || name == "math") && end < n && s_[end - 1] == '/') continue;  // <svg/>: holds nothing
        // (segment.py: a declarative shadow root, <template shadowrootmode=open>, is skipped to its first end tag)
        size_t stop = n;
        if (in_noscript > 0) {  // (segment.py: a raw element in a noscript ends at its end tag at the latest)
          if (noscript_end == npos || noscript_end < at) noscript_end = find_end_tag("noscript", at);
          stop = noscript_end;
        }
        const size_t close_at = name == "template" && contains_ascii(name_end, attributes_end, "shadowroot")
                                    ? find_end_tag(name, at, stop)
                                    : find_raw_end(name, at, &unbalanced_, stop);
        if (tag == T_TITLE && page_.title.empty()) {
          Text raw;
          unescape(s_, at, close_at, raw);
          join_split(raw.data(), raw.size(), page_.title);
        } else if (tag == T_SCRIPT && contains_ld_json(name_end, attributes_end)) {
          read_declared(at, close_at);
          read_types(at, close_at);
        }
        if (close_at >= n) {
          at = n;
        } else if (s_[close_at + 1] == '/' && name_is(close_at + 2, std::min(n, close_at + 2 + name.size()), name)) {
          at = tag_end(close_at + 2 + name.size()) + 1;
        } else {
          at = close_at;  // ended by an HTML tag (find_nested_end) or a </noscript>: that tag is read
        }
        continue;
      }
      if (info(tag).flags & kAnnotation) {  // (segment.py: a ruby annotation is skipped to the next tag)
        const size_t next_tag = find('<', at);
        at = next_tag == npos ? n : next_tag;
        continue;
      }
      if (tag == T_META && attributes_end > name_end) {
        read_meta(name_end, attributes_end);
      } else if (tag == T_LINK && attributes_end > name_end && page_.canonical.empty()) {
        read_link(name_end, attributes_end);
      }
      if (info(tag).counted >= 0) page_.tag_counts[info(tag).counted] += 1;
      open(tag, name_end, attributes_end);
    }
    pop_to(1);
    flush();
    return true;
  }

 private:
  static constexpr size_t npos = static_cast<size_t>(-1);

  const TagInfo &info(int32_t tag) const {
    static const TagInfo none;
    return tag < static_cast<int32_t>(vocabulary_.info.size()) ? vocabulary_.info[tag] : none;
  }

  // str.find(c, from, to)
  size_t find(CharT c, size_t from, size_t to = npos) const {
    if (to > n_) to = n_;
    if (from >= to) return npos;
    const size_t i = find_unit(s_, from, to, c);
    return i < to ? i : npos;
  }

  // nesting.comment_end: past the comment whose text starts at `at`: after its "-->" or "--!>"
  // (the first), at once for "<!-->" and "<!--->", or n
  size_t comment_end(size_t at) const {
    if (at < n_ && s_[at] == '>') return at + 1;
    if (at + 1 < n_ && s_[at] == '-' && s_[at + 1] == '>') return at + 2;
    for (size_t i = find(static_cast<CharT>('-'), at); i != npos; i = find(static_cast<CharT>('-'), i + 1)) {
      if (i + 2 < n_ && s_[i + 1] == '-' && s_[i + 2] == '>') return i + 3;
      if (i + 3 < n_ && s_[i + 1] == '-' && s_[i + 2] == '!' && s_[i + 3] == '>') return i + 4;
    }
    return n_;
  }

  // segment._tag_end: the ">" that ends the tag whose attributes start at `at` (or n): a quote
  // right after "=" (spaces between allowed) opens a value that may hold ">", up to the same quote.
  // Quotes are looked for before the next ">" only (npos: none there).
  size_t tag_end(size_t at) const {
    const size_t n = n_;
    size_t gt = find('>', at);
    if (gt == npos) return n;
    size_t dq = find('"', at, gt), sq = find('\'', at, gt);
    while (true) {
      const size_t quote_at = std::min(dq, sq);
      if (quote_at == npos) return gt;
      size_t before = quote_at;  // (one past the position looked at)
      while (before > at && is_space(s_[before - 1])) --before;
      if (before > at && s_[before - 1] == '=') {
        const size_t close = find(s_[quote_at], quote_at + 1);
        if (close == npos) return n;
        at = close + 1;
      } else {
        at = quote_at + 1;
      }
      if (gt < at) {
        gt = find('>', at);
        if (gt == npos) return n;
        dq = find('"', at, gt);
        sq = find('\'', at, gt);
        continue;
      }
      if (dq != npos && dq < at) dq = find('"', at, gt);
      if (sq != npos && sq < at) sq = find('\'', at, gt);
    }
  }

  // segment._find_end_tag: where "</name" followed by \s, "/" or ">" starts (name matched as
  // re.IGNORECASE does), at or after `at`, or n.
  size_t find_end_tag(const std::string &name, size_t at, size_t stop = npos) const {
    if (stop > n_) stop = n_;
    const size_t length = name.size();
    for (size_t i = find('<', at, stop); i != npos; i = find('<', i + 1, stop)) {
      if (i + 2 + length >= stop) return stop;  // (no room for "</name" and one more character)
      if (s_[i + 1] != '/') continue;
      size_t k = 0;
      while (k < length && ci_equal(s_[i + 2 + k], name[k])) ++k;
      if (k < length) continue;
      const Py_UCS4 after = s_[i + 2 + length];
      if (after == '/' || after == '>' || is_space(after)) return i;
    }
    return stop;
  }

  // segment._past_markup: where reading goes on when the "<" at `lt` opens markup that is not an
  // element (a comment, a declaration "<!...>", a processing instruction "<?...>", or "</" and no
  // letter: a bogus comment to the next ">"), n if it runs to the end; npos when it opens a tag or
  // is text.
  size_t past_markup(size_t lt) const {
    const size_t n = n_;
    if (lt + 1 >= n) return npos;
    const CharT next = s_[lt + 1];
    if (next == '!' && lt + 3 < n && s_[lt + 2] == '-' && s_[lt + 3] == '-') {
      return comment_end(lt + 4);
    }
    if (next == '!' || next == '?' || (next == '/' && (lt + 2 >= n || !is_ascii_alpha(s_[lt + 2])))) {
      const size_t end = find(static_cast<CharT>('>'), lt + 2);
      return end == npos ? n : end + 1;
    }
    return npos;
  }

  // segment._find_raw_end: where the end tag of the raw element `name` whose content starts at
  // `at` starts (or n): a script's as browsers read it, a template's, svg's or math's counting
  // their nesting, any other's the first.
  // `unbalanced` (the page's): the nested names whose count once ran to the page's end without
  // coming back to 0, closed from then on by their first end tag (else quadratic on a page of
  // "<template><template></template>" repeated).
  size_t find_raw_end(const std::string &name, size_t at, std::unordered_set<std::string> *unbalanced = nullptr,
                      size_t stop = npos) const {
    if (stop > n_) stop = n_;
    if (name == "script") return find_script_end(at, stop);
    if ((name == "template" || name == "svg" || name == "math") &&
        (unbalanced == nullptr || unbalanced->count(name) == 0)) {
      bool balanced = false;
      const size_t close = find_nested_end(name, at, &balanced, stop);
      if (!balanced && unbalanced != nullptr && stop == n_) unbalanced->insert(name);
      return close;
    }
    return find_end_tag(name, at, stop);
  }

  // Whether "<" (closing: "</") "script" (as re.IGNORECASE matches it) and one of \s, "/", ">"
  // start at `i` (s_[i] == '<').
  bool script_tag_at(size_t i, bool closing, size_t stop) const {  // (it and the character after it before `stop`)
    size_t k = i + 1;
    if (closing) {
      if (k >= stop || s_[k] != '/') return false;
      ++k;
    }
    static const char kName[] = "script";
    if (k + 6 >= stop) return false;  // (no room for the name and one more character)
    for (size_t j = 0; j < 6; ++j)
      if (!ci_equal(s_[k + j], kName[j])) return false;
    const Py_UCS4 after = s_[k + 6];
    return after == '/' || after == '>' || is_space(after);
  }

  bool comment_end_at(size_t i, size_t stop) const {  // "-->" at i, before `stop`
    return i + 2 < stop && s_[i] == '-' && s_[i + 1] == '-' && s_[i + 2] == '>';
  }

  // segment._find_script_end: HTML's script data, escaped and double escaped states, one pass.
  size_t find_script_end(size_t at, size_t stop) const {  // (read before `stop` only)
    enum { kData, kEscaped, kDoubleEscaped } state = kData;
    const size_t n = stop;
    size_t i = at;
    while (i < n) {
      if (state == kData) {
        const size_t lt = find(static_cast<CharT>('<'), i, n);
        if (lt == npos) return n;
        if (lt + 3 < n && s_[lt + 1] == '!' && s_[lt + 2] == '-' && s_[lt + 3] == '-') {
          state = kEscaped;
          i = lt + 2;  // (its dashes count: "<!-->" opens and closes)
        } else if (script_tag_at(lt, true, n)) {
          return lt;
        } else {
          i = lt + 1;
        }
        continue;
      }
      const CharT c = s_[i];
      if (c == '-' && comment_end_at(i, n)) {
        state = kData;
        i += 3;
      } else if (c == '<' && script_tag_at(i, true, n)) {
        if (state == kEscaped) return i;
        state = kEscaped;
        i += 9;  // "</script" and the character after it
      } else if (c == '<' && state == kEscaped && script_tag_at(i, false, n)) {
        state = kDoubleEscaped;
        i += 8;  // "<script" and the character after it
      } else {
        ++i;
      }
    }
    return n;
  }

  // Whether s_[start, end) is `want` in ASCII lower case (what str.lower() makes of it: no other
  // character lower-cases to an ASCII letter but the Kelvin sign, and no name asked has a "k").
  bool name_is(size_t start, size_t end, const std::string &want) const {
    if (end - start != want.size()) return false;
    for (size_t j = 0; j < want.size(); ++j)
      if (s_[start + j] >= 128 || ascii_lower(s_[start + j]) != static_cast<Py_UCS4>(want[j])) return false;
    return true;
  }

  // segment._find_nested_end: the "</name" that closes a template, svg or math, counting the start
  // and end tags of `name` read as the page's tags (a self-closed svg or math opens nothing; in a
  // template, the raw elements but these three are skipped whole); if the count never comes back
  // to 0, the first "</name" read (or n); *balanced says whether it came back to 0.  In an svg or a
  // math, a tag of segment._ENDS_FOREIGN outside the elements that hold HTML ends it where that tag
  // starts (*balanced: true).
  size_t find_nested_end(const std::string &name, size_t at, bool *balanced, size_t stop) const {
    static const std::string kRawInTemplate[] = {"script",  "style",   "textarea", "title",    "xmp",
                                                 "iframe",  "noembed", "noframes", "plaintext"};
    static const std::vector<std::string> kEndsForeign = {
        "b",     "big", "blockquote", "body", "br",   "center", "code",    "dd",    "div",   "dl",
        "dt",    "em",  "embed",      "h1",   "h2",   "h3",     "h4",      "h5",    "h6",    "head",
        "hr",    "i",   "img",        "li",   "listing", "menu", "meta",   "nobr",  "ol",    "p",
        "pre",   "ruby", "s",         "small", "span", "strong", "strike", "sub",   "sup",   "table",
        "tt",    "u",   "ul",         "var"};
    static const std::vector<std::string> kEndsForeignClosing = {"p", "br"};
    static const std::vector<std::string> kSvgHoldsHtml = {"foreignobject", "desc", "title"};
    static const std::vector<std::string> kMathHoldsHtml = {"mi", "mo", "mn", "ms", "mtext", "annotation-xml"};
    static const std::vector<std::string> kNone;
    const size_t n = stop;  // (tags are read before it; their names and ends as anywhere: segment.py)
    const bool template_ = name == "template";
    const std::vector<std::string> &holds_html = name == "svg" ? kSvgHoldsHtml : name == "math" ? kMathHoldsHtml : kNone;
    const auto one_of = [this](size_t start, size_t end, const std::vector<std::string> &names) {
      for (const std::string &candidate : names)
        if (name_is(start, end, candidate)) return true;
      return false;
    };
    size_t depth = 1, first = npos, in_html = 0;
    while (at < n) {
      const size_t lt = find(static_cast<CharT>('<'), at, n);
      if (lt == npos) break;
      const size_t past = past_markup(lt);
      if (past != npos) {
        at = past;
        continue;
      }
      const bool closing = lt + 1 < n_ && s_[lt + 1] == '/';
      const size_t start = closing ? lt + 2 : lt + 1;
      if (start >= n_ || !is_ascii_alpha(s_[start])) {
        at = lt + 1;
        continue;
      }
      size_t name_end = start;
      while (name_end < n_ && s_[name_end] != '/' && s_[name_end] != '>' && !is_space(s_[name_end])) ++name_end;
      const size_t end = tag_end(name_end);
      at = end >= n ? n : end + 1;
      if (name_is(start, name_end, name)) {
        if (closing) {
          if (--depth == 0) {
            *balanced = true;
            return lt;
          }
          if (first == npos) first = lt;
        } else if (template_ || !(end < n && s_[end - 1] == '/')) {
          ++depth;
        }
        continue;
      }
      if (!template_) {  // (svg, math)
        if (one_of(start, name_end, holds_html)) {
          if (closing) {
            if (in_html > 0) --in_html;
          } else if (!(end < n && s_[end - 1] == '/')) {
            ++in_html;
          }
        } else if (in_html == 0 && one_of(start, name_end, closing ? kEndsForeignClosing : kEndsForeign)) {
          *balanced = true;
          return lt;
        }
        continue;
      }
      if (closing) continue;
      for (const std::string &raw : kRawInTemplate) {
        if (!name_is(start, name_end, raw)) continue;
        const size_t close = find_raw_end(raw, at, nullptr, n);
        at = close >= n ? n : tag_end(close + 2 + raw.size()) + 1;
        break;
      }
    }
    return first == npos ? n : first;
  }

  bool intern_tag(size_t start, size_t end, int32_t *tag) {
    bool ascii = true;
    for (size_t i = start; i < end && ascii; ++i) ascii = s_[i] < 128;
    NameKey key;
    if (ascii) {
      if (end - start <= 16) {
        make_lower_key(start, end, key);
        auto it = vocabulary_.ids.find(key);
        if (it != vocabulary_.ids.end()) {
          *tag = it->second;
          return true;
        }
      }
      lowered_.clear();
      for (size_t i = start; i < end; ++i) lowered_.push_back(ascii_lower(s_[i]));
    } else {
      name_.assign(s_ + start, s_ + end);
      if (!python_lower(gil_, name_, lowered_)) return false;
      if (make_key(lowered_.begin(), lowered_.size(), key)) {
        auto it = vocabulary_.ids.find(key);
        if (it != vocabulary_.ids.end()) {
          *tag = it->second;
          return true;
        }
      }
    }
    auto it = extra_ids_.find(lowered_);
    if (it != extra_ids_.end()) {
      *tag = it->second;
      return true;
    }
    *tag = static_cast<int32_t>(vocabulary_.names.size() + page_.extra_tags.size());
    page_.extra_tags.push_back(lowered_);
    extra_ids_.emplace(lowered_, *tag);
    return true;
  }

  void make_lower_key(size_t start, size_t end, NameKey &key) const {
    key = NameKey();
    key.length = static_cast<uint32_t>(end - start);
    for (size_t i = 0; i < end - start; ++i) {
      const uint64_t c = ascii_lower(s_[start + i]);
      if (i < 8)
        key.lo |= c << (8 * i);
      else
        key.hi |= c << (8 * (i - 8));
    }
  }

  // The signature of a tag without a class attribute, or with the classes in signature_key_
  // after the tag id.
  int32_t signature(int32_t tag, bool has_class) {
    if (!has_class) {
      if (static_cast<size_t>(tag) >= signature_of_tag_.size()) signature_of_tag_.resize(tag + 1, -1);
      int32_t &id = signature_of_tag_[tag];
      if (id < 0) {
        id = static_cast<int32_t>(page_.signatures.size());
        page_.signatures.push_back(Signature{tag, nullptr});
      }
      return id;
    }
    auto it = page_.class_signatures.find(signature_key_);
    if (it != page_.class_signatures.end()) return it->second;
    const int32_t id = static_cast<int32_t>(page_.signatures.size());
    it = page_.class_signatures.emplace(std::move(signature_key_), id).first;
    signature_key_ = Text();
    page_.signatures.push_back(Signature{tag, &it->first});
    return id;
  }

  // -- text ---------------------------------------------------------------------------

  void add_text(size_t start, size_t end) {
    const bool amp = start < end && find_unit(s_, start, end, static_cast<CharT>('&')) < end;
    const size_t before = text_.size();
    if (amp) {
      unescape(s_, start, end, text_);
    } else {
      text_.append(s_ + start, s_ + end);
    }
    add_piece(before);
  }

  void add_text(Py_UCS4 c) {
    const size_t before = text_.size();
    text_.push_back(c);
    add_piece(before);
  }

  // _Reader.add_text of the piece text_[before:], already unescaped: whitespace runs collapsed
  // outside <pre> (in place), its words counted (segment.count_words).
  void add_piece(size_t before) {
    int64_t words = 0, han = 0;
    bool in_word = false, in_space = false;
    const bool collapse = in_pre_ == 0;
    const size_t end = text_.size();
    size_t w = before;
    for (size_t i = before; i < end; ++i) {
      const Py_UCS4 c = text_[i];
      if (is_han(c)) {
        ++han;
      } else {
        words += han_extra(han);
        han = 0;
      }
      if (collapse && is_space(c)) {
        if (!in_space) text_[w++] = ' ';
        in_space = true;
        in_word = false;
        continue;
      }
      in_space = false;
      text_[w++] = c;
      if (is_word(c)) {
        if (!in_word) ++words;
        in_word = true;
      } else {
        in_word = false;
      }
    }
    words += han_extra(han);
    text_.resize(w);
    if (w == before) return;
    pieces_ = true;
    words_ += words;
    if (in_link_ && words) {
      link_words_ += words;
      if (!link_counted_) {
        links_ += 1;
        link_counted_ = true;
      }
    }
    if (words) {
      uint32_t bits = 0;
      const size_t depth = stack_.size();
      for (size_t k = depth > 8 ? depth - 8 : 0; k < depth; ++k) bits |= info(page_.elements[stack_[k]].tag).inline_bits;
      inline_ |= bits;
    }
  }

  void line_break() {
    text_.push_back('\n');
    pieces_ = true;
    lines_ += 1;
  }

  // " ".join(str.split(text)) appended to out
  template <class T>
  static void join_split(const T *p, size_t length, Text &out) {
    bool first = true;
    size_t i = 0;
    while (i < length) {
      if (is_space(p[i])) {
        ++i;
        continue;
      }
      if (!first) out.push_back(' ');
      first = false;
      while (i < length && !is_space(p[i])) out.push_back(p[i++]);
    }
  }

  // _Reader.flush: the pieces become a block: one line per "\n", words joined by one space
  // (rstripped inside <pre>), empty lines dropped; in place (the output never passes the input).
  void flush() {
    if (!pieces_) return;
    Text &t = text_;
    const size_t length = t.size();
    size_t w = 0, line_start = 0;
    bool first = true;
    for (size_t i = 0; i <= length; ++i) {
      if (i < length && t[i] != '\n') continue;
      if (in_pre_) {
        size_t line_end = i;
        while (line_end > line_start && is_space(t[line_end - 1])) --line_end;
        if (line_end > line_start) {
          if (!first) t[w++] = '\n';
          first = false;
          for (size_t k = line_start; k < line_end; ++k) t[w++] = t[k];
        }
      } else {
        size_t k = line_start;
        while (k < i && is_space(t[k])) ++k;
        if (k < i) {
          if (!first) t[w++] = '\n';
          first = false;
          bool word = false;  // " ".join(line.split())
          while (k < i) {
            if (is_space(t[k])) {
              ++k;
              continue;
            }
            if (word) t[w++] = ' ';
            word = true;
            while (k < i && !is_space(t[k])) t[w++] = t[k++];
          }
        }
      }
      line_start = i + 1;
    }
    t.resize(w);
    pieces_ = false;
    const int64_t words = words_, link_words = link_words_, links = links_, inline_bits = inline_;
    words_ = link_words_ = links_ = inline_ = 0;
    lines_ = 1;
    link_counted_ = false;
    if (w == 0) return;
    int64_t spaces = 0, newlines = 0;
    bool ends = false;
    for (size_t i = 0; i < w; ++i) {
      const Py_UCS4 c = t[i];
      spaces += c == ' ';
      newlines += c == '\n';
      if (!ends && is_stop(c) && (i + 1 == w || is_space(t[i + 1]))) ends = true;
    }
    const int32_t chars = static_cast<int32_t>(w - spaces - newlines);
    Block block;
    if (t.capacity() > 2 * w + 64) t.shrink_to_fit();
    block.text = std::move(t);
    t = Text();
    block.element = block_of_.back();
    block.words = static_cast<int32_t>(words);
    block.link_words = static_cast<int32_t>(link_words);
    block.chars = chars;
    block.links = static_cast<int32_t>(links);
    block.inline_bits = static_cast<int32_t>(inline_bits);
    block.lines = static_cast<int32_t>(newlines + 1);
    const int32_t index = static_cast<int32_t>(page_.blocks.size());
    page_.blocks.push_back(std::move(block));
    page_.chars += chars;
    // counted on the innermost open element; added to its parent's when it closes (pop_to)
    Element &e = page_.elements[stack_.back()];
    e.words += words;
    e.link_words += link_words;
    e.chars += chars;
    e.blocks += 1;
    if (words >= 10 && ends) {
      e.long_blocks += 1;
      e.long_words += words;
    }
    if (e.first_block < 0) e.first_block = index;
    e.last_block = index;
  }

  // -- tags -----------------------------------------------------------------------------

  void open(int32_t tag, size_t attributes_start, size_t attributes_end) {
    const TagInfo &ti = info(tag);
    const bool block = ti.flags & kBlock;
    if (block) {
      flush();
      implied_ends(tag, ti);
    }
    if (ti.flags & kVoid) {
      // a <br> ends a block (a line of it inside <pre>), as segment.py's _Reader.open
      if (tag == T_BR) {
        if (in_pre_) line_break();
        else flush();
      }
      return;
    }
    if (stack_.size() >= static_cast<size_t>(block ? kMaxDepth : kMaxInlineDepth)) return;
    const int32_t parent = stack_.back();
    Element e = {};
    e.tag = tag;
    e.parent = parent;
    e.depth = static_cast<int32_t>(stack_.size());
    e.block = block;
    e.first_block = e.last_block = -1;
    has_class_ = false;
    if (attributes_end > attributes_start) read_attributes(e, attributes_start, attributes_end);
    e.signature = signature(tag, has_class_);
    if (tag == T_A) {
      in_link_ += 1;
      link_counted_ = false;
      e.links = 1;
    } else if (tag == T_PRE) {
      in_pre_ += 1;
    }
    const int32_t index = static_cast<int32_t>(page_.elements.size());
    page_.elements.push_back(e);
    page_.elements[parent].elements += 1;
    stack_.push_back(index);
    block_of_.push_back(block ? index : block_of_.back());
  }

  void implied_ends(int32_t tag, const TagInfo &ti) {
    if (ti.flags & kClosesP) close_in_scope([](int32_t t) { return t == T_P; }, kScopeP);
    if (tag == T_LI) {
      close_in_scope([](int32_t t) { return t == T_LI; }, kScopeList);
    } else if (tag == T_DT || tag == T_DD) {
      close_in_scope([](int32_t t) { return t == T_DT || t == T_DD; }, kScopeDl);
    } else if (tag == T_TD || tag == T_TH) {
      close_in_scope([](int32_t t) { return t == T_TD || t == T_TH; }, kScopeCell);
    } else if (tag == T_TR) {
      close_in_scope([](int32_t t) { return t == T_TR || t == T_TD || t == T_TH; }, kScopeTable);
    } else if (tag == T_OPTION || tag == T_OPTGROUP) {
      close_in_scope([](int32_t t) { return t == T_OPTION; }, kScopeSelect);
    }
  }

  template <class Names>
  void close_in_scope(Names names, uint32_t scope) {
    const size_t depth = stack_.size();
    const size_t low = depth - 1 > static_cast<size_t>(kMaxCloseSearch) ? depth - 1 - kMaxCloseSearch : 0;
    for (size_t d = depth - 1; d > low; --d) {
      const int32_t t = page_.elements[stack_[d]].tag;
      if (names(t)) {
        pop_to(d);
        return;
      }
      if (info(t).flags & scope) return;
    }
  }

  void close(int32_t tag) {
    if ((info(tag).flags & kBlock) || tag == T_BR) flush();
    if (tag == T_BR) {  // </br> is <br>
      line_break();
      return;
    }
    const size_t depth = stack_.size();
    const size_t low = depth - 1 > static_cast<size_t>(kMaxCloseSearch) ? depth - 1 - kMaxCloseSearch : 0;
    for (size_t d = depth - 1; d > low; --d) {
      if (page_.elements[stack_[d]].tag == tag) {
        pop_to(d);
        return;
      }
    }
  }

  // Close the element at `depth` of the stack and every element above it.
  void pop_to(size_t depth) {
    auto &elements = page_.elements;
    while (stack_.size() > depth) {
      const int32_t top = stack_.back();
      if (elements[top].block) flush();
      stack_.pop_back();
      block_of_.pop_back();
      const Element &child = elements[top];
      Element &parent = elements[stack_.back()];
      parent.words += child.words;
      parent.link_words += child.link_words;
      parent.chars += child.chars;
      parent.blocks += child.blocks;
      parent.long_blocks += child.long_blocks;
      parent.long_words += child.long_words;
      parent.elements += child.elements;
      parent.links += child.links;
      if (child.first_block >= 0) {
        if (parent.first_block < 0 || child.first_block < parent.first_block) parent.first_block = child.first_block;
        parent.last_block = std::max(parent.last_block, child.last_block);
      }
      if (child.tag == T_A) {
        in_link_ -= 1;
        link_counted_ = false;
      } else if (child.tag == T_PRE) {
        in_pre_ -= 1;
      }
    }
  }

  // -- attributes (segment._read_attributes: the matches of segment._ATTRIBUTE, left to right)

  static bool is_attribute_name_char(Py_UCS4 c) {
    return !(c == '"' || c == '\'' || c == '=' || c == '<' || c == '>' || c == '/' || c == '`' || is_space(c));
  }

  // Each match of segment._ATTRIBUTE in s[start:end], left to right: f(name_start, name_end,
  // value_start, value_end), the value its first group that matched after the name ("" if none).
  template <class F>
  void each_attribute(size_t start, size_t end, F f) const {
    size_t p = start;
    while (true) {
      while (p < end && !is_attribute_name_char(s_[p])) ++p;
      if (p >= end) return;
      size_t q = p;
      while (q < end && is_attribute_name_char(s_[q])) ++q;
      size_t value_start = q, value_end = q, match_end = q;
      size_t j = q;
      while (j < end && is_space(s_[j])) ++j;
      if (j < end && s_[j] == '=') {
        size_t k = j + 1;
        while (k < end && is_space(s_[k])) ++k;
        size_t close = npos;
        if (k < end && (s_[k] == '"' || s_[k] == '\'')) {
          const size_t c = find_unit(s_, k + 1, end, s_[k]);
          if (c < end) close = c;
        }
        if (close != npos) {
          value_start = k + 1;
          value_end = close;
          match_end = close + 1;
        } else {
          size_t v = k;
          while (v < end && s_[v] != '>' && !is_space(s_[v])) ++v;
          value_start = k;
          value_end = v;
          match_end = v;
        }
      }
      f(p, q, value_start, value_end);
      p = match_end;
    }
  }

  void read_attributes(Element &e, size_t start, size_t end) {
    each_attribute(start, end, [&](size_t name_start, size_t name_end, size_t value_start, size_t value_end) {
      apply_attribute(e, name_start, name_end, value_start, value_end);
    });
  }

  // -- what the head declares (segment._read_declared, segment._read_summary) ------------

  // s[start:end] equals `want` (ASCII), case-insensitively as str.lower() compares: only ASCII
  // letters lower-case to the ASCII letters of the names compared here (U+0130 lower-cases to two
  // characters, U+212A to "k", which none holds)
  bool equals_lower(size_t start, size_t end, const char *want) const {
    const size_t length = std::strlen(want);
    if (end - start != length) return false;
    for (size_t i = 0; i < length; ++i) {
      const Py_UCS4 c = s_[start + i];
      if (c >= 128 || ascii_lower(c) != static_cast<Py_UCS4>(want[i])) return false;
    }
    return true;
  }

  // "ld+json" in s[start:end].lower()
  bool contains_ld_json(size_t start, size_t end) const { return contains_ascii(start, end, "ld+json"); }

  // Whether s_[start, end) holds `want` (ASCII lower case), ASCII case ignored.
  bool contains_ascii(size_t start, size_t end, const char *want) const {
    const size_t length = std::strlen(want);
    for (size_t i = start; i + length <= end; ++i) {
      size_t k = 0;
      while (k < length && s_[i + k] < 128 && ascii_lower(s_[i + k]) == static_cast<Py_UCS4>(want[k])) ++k;
      if (k == length) return true;
    }
    return false;
  }

  bool literal_at(size_t i, size_t end, const char *want) const {
    for (; *want; ++want, ++i) {
      if (i >= end || s_[i] != static_cast<Py_UCS4>(static_cast<unsigned char>(*want))) return false;
    }
    return true;
  }

  // segment._read_declared: each match of segment._DECLARED in s[start:end]
  // ("articleBody" or "text", \s*:\s*, a string: characters but '"' and '\\', or '\\' and any
  // character but "\n", up to a '"'), its string decoded as json.loads does (skipped where it
  // cannot be, or is blank), then unescaped.  Matches are found left to right, the next looked
  // for after the end of the last; where a string does not end, at the next '"' after the key's.
  // Linear: a string that does not end (a "\\" before a line break, or the script's end) holds
  // no key (a key's closing quote would end the string), so no character is read by two of them.
  void read_declared(size_t start, size_t end) {
    size_t i = start;
    Text value;
    while (true) {
      const size_t q = find(static_cast<CharT>('"'), i, end);
      if (q == npos) return;
      i = q + 1;
      size_t p;
      if (literal_at(q + 1, end, "articleBody\"")) {
        p = q + 13;
      } else if (literal_at(q + 1, end, "text\"")) {
        p = q + 6;
      } else {
        continue;
      }
      while (p < end && is_space(s_[p])) ++p;
      if (p >= end || s_[p] != ':') continue;
      ++p;
      while (p < end && is_space(s_[p])) ++p;
      if (p >= end || s_[p] != '"') continue;
      const size_t body = p + 1;
      size_t v = body;
      bool closed = false;
      while (v < end) {
        const Py_UCS4 c = s_[v];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (v + 1 < end && s_[v + 1] != '\n') {
            v += 2;
            continue;
          }
          break;
        }
        ++v;
      }
      if (!closed) continue;
      i = v + 1;
      value.clear();
      value.reserve(v - body);
      if (!json_string(body, v, value)) continue;
      bool blank = true;
      for (Py_UCS4 c : value) {
        if (!is_space(c)) {
          blank = false;
          break;
        }
      }
      if (blank) continue;
      if (std::find(value.begin(), value.end(), static_cast<char32_t>('&')) == value.end()) {
        page_.declared.push_back(std::move(value));  // (unescape changes nothing)
        value = Text();
      } else {
        Text text;
        unescape(value.data(), 0, value.size(), text);
        page_.declared.push_back(std::move(text));
      }
    }
  }

  static int hex_digit(Py_UCS4 c) {
    if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
    return -1;
  }

  // The 4 hex digits at s[at:at + 4] (all before `end`), or -1.
  int32_t hex4(size_t at, size_t end) const {
    if (at + 4 > end) return -1;
    int32_t value = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const int d = hex_digit(s_[k]);
      if (d < 0) return -1;
      value = value * 16 + d;
    }
    return value;
  }

  // json.loads('"' + s[start:end] + '"') into out (s[start:end] holds no '"' but after a '\\'):
  // CPython's scanstring (strict): a control character (below U+0020) or an escape other than
  // \" \\ \/ \b \f \n \r \t \uXXXX is an error; \uXXXX of a high surrogate followed by \uXXXX
  // of a low one is their character, any other surrogate stays alone.  false on an error.
  bool json_string(size_t start, size_t end, Text &out) const {
    size_t i = start;
    while (i < end) {
      const Py_UCS4 c = s_[i];
      if (c != '\\') {
        if (c <= 0x1f) return false;
        out.push_back(c);
        ++i;
        continue;
      }
      if (i + 1 >= end) return false;
      const Py_UCS4 e = s_[i + 1];
      switch (e) {
        case '"': out.push_back('"'); i += 2; continue;
        case '\\': out.push_back('\\'); i += 2; continue;
        case '/': out.push_back('/'); i += 2; continue;
        case 'b': out.push_back('\b'); i += 2; continue;
        case 'f': out.push_back('\f'); i += 2; continue;
        case 'n': out.push_back('\n'); i += 2; continue;
        case 'r': out.push_back('\r'); i += 2; continue;
        case 't': out.push_back('\t'); i += 2; continue;
        case 'u': break;
        default: return false;
      }
      const int32_t c1 = hex4(i + 2, end);
      if (c1 < 0) return false;
      i += 6;
      if (c1 >= 0xD800 && c1 <= 0xDBFF && i + 6 <= end && s_[i] == '\\' && s_[i + 1] == 'u') {
        const int32_t c2 = hex4(i + 2, end);
        if (c2 < 0) return false;  // (scanstring reports it here; read alone it would fail the same)
        if (c2 >= 0xDC00 && c2 <= 0xDFFF) {
          out.push_back(0x10000 + (((c1 - 0xD800) << 10) | (c2 - 0xDC00)));
          i += 6;
          continue;
        }
      }
      out.push_back(static_cast<Py_UCS4>(c1));
    }
    return true;
  }

  // segment._count_schema_type: s[start:end] after its last "/", ASCII lower case, by family
  void count_schema_type(size_t start, size_t end) {
    size_t from = start;
    for (size_t i = start; i < end; ++i)
      if (s_[i] == '/') from = i + 1;
    std::string name;
    for (size_t i = from; i < end; ++i) {
      const Py_UCS4 c = s_[i];
      if (c >= 128) return;  // (no family's name has one)
      name.push_back(static_cast<char>(ascii_lower(c)));
    }
    const auto &families = schema_families();
    const auto it = families.find(name);
    if (it != families.end()) page_.schema_counts[it->second] += 1;
  }

  // segment._read_types: each match of segment._TYPE in s[start:end] ("@type", \s*:\s*, then a
  // string to the next '"', or a list: '[' to the first ']' with no '[' before it, whose
  // strings count), found left to right, the next looked for after the end of the last (or one
  // character after the start of a "@type" that did not match).  Linear: the scans of two
  // failed matches do not overlap (each stops at the next '"' or bracket).
  void read_types(size_t start, size_t end) {
    size_t i = start;
    while (true) {
      const size_t q = find(static_cast<CharT>('"'), i, end);
      if (q == npos) return;
      i = q + 1;
      if (!literal_at(q + 1, end, "@type\"")) continue;
      size_t p = q + 7;
      while (p < end && is_space(s_[p])) ++p;
      if (p >= end || s_[p] != ':') continue;
      ++p;
      while (p < end && is_space(s_[p])) ++p;
      if (p >= end) continue;
      if (s_[p] == '"') {
        const size_t close = find(static_cast<CharT>('"'), p + 1, end);
        if (close == npos) continue;
        count_schema_type(p + 1, close);
        i = close + 1;
      } else if (s_[p] == '[') {
        size_t v = p + 1;
        while (v < end && s_[v] != '[' && s_[v] != ']') ++v;
        if (v >= end || s_[v] != ']') continue;
        size_t a = p + 1;
        while (true) {  // _STRING.findall(the list)
          const size_t open_at = find(static_cast<CharT>('"'), a, v);
          if (open_at == npos) break;
          const size_t close = find(static_cast<CharT>('"'), open_at + 1, v);
          if (close == npos) break;
          count_schema_type(open_at + 1, close);
          a = close + 1;
        }
        i = v + 1;
      }
    }
  }

  // s[start:end] starts with "http"
  bool starts_http(size_t start, size_t end) const { return literal_at(start, end, "http"); }

  // s[start:end] ASCII-lower-cased (what _ascii_lower does: only A-Z change)
  Text ascii_lowered(size_t start, size_t end) const {
    Text out;
    out.reserve(end - start);
    for (size_t i = start; i < end; ++i) out.push_back(ascii_lower(s_[i]));
    return out;
  }

  // segment._read_meta: a <meta> whose name or property is a description (its last name,
  // property and content attributes count) gives its content, unescaped, when not empty; else
  // the first og:type (stripped, ASCII lower case) and the first og:url that starts with "http".
  void read_meta(size_t start, size_t end) {
    size_t found[3][2];  // name, property, content: (value_start, value_end)
    bool seen[3] = {false, false, false};
    each_attribute(start, end, [&](size_t name_start, size_t name_end, size_t value_start, size_t value_end) {
      static const char *const names[3] = {"name", "property", "content"};
      for (int k = 0; k < 3; ++k) {
        if (equals_lower(name_start, name_end, names[k])) {
          seen[k] = true;
          found[k][0] = value_start;
          found[k][1] = value_end;
        }
      }
    });
    auto is_summary = [&](int k) {
      if (!seen[k]) return false;
      for (const char *want : {"description", "og:description", "twitter:description"})
        if (equals_lower(found[k][0], found[k][1], want)) return true;
      return false;
    };
    if (!seen[2] || found[2][1] == found[2][0]) return;
    if (is_summary(0) || is_summary(1)) {
      Text text;
      unescape(s_, found[2][0], found[2][1], text);
      page_.summaries.push_back(std::move(text));
      return;
    }
    auto named = [&](const char *want) {
      return (seen[0] && equals_lower(found[0][0], found[0][1], want)) ||
             (seen[1] && equals_lower(found[1][0], found[1][1], want));
    };
    size_t content_start = found[2][0], content_end = found[2][1];
    strip(content_start, content_end);
    if (named("og:type")) {
      if (page_.og_type.empty()) page_.og_type = ascii_lowered(content_start, content_end);
    } else if (named("og:url")) {
      if (page_.og_url.empty() && starts_http(content_start, content_end))
        page_.og_url.assign(s_ + content_start, s_ + content_end);
    }
  }

  // segment._read_link: a <link> whose (last) rel is "canonical" (stripped, ASCII lower case) and
  // whose (last) href, stripped, starts with "http" gives that href
  void read_link(size_t start, size_t end) {
    size_t rel[2] = {0, 0}, href[2] = {0, 0};
    bool seen_rel = false, seen_href = false;
    each_attribute(start, end, [&](size_t name_start, size_t name_end, size_t value_start, size_t value_end) {
      if (equals_lower(name_start, name_end, "rel")) {
        seen_rel = true;
        rel[0] = value_start;
        rel[1] = value_end;
      } else if (equals_lower(name_start, name_end, "href")) {
        seen_href = true;
        href[0] = value_start;
        href[1] = value_end;
      }
    });
    if (!seen_rel || !seen_href) return;
    strip(rel[0], rel[1]);
    strip(href[0], href[1]);
    if (equals_lower(rel[0], rel[1], "canonical") && starts_http(href[0], href[1]))
      page_.canonical.assign(s_ + href[0], s_ + href[1]);
  }

  void strip(size_t &start, size_t &end) const {
    while (start < end && is_space(s_[start])) ++start;
    while (end > start && is_space(s_[end - 1])) --end;
  }

  void apply_attribute(Element &e, size_t name_start, size_t name_end, size_t start, size_t end) {
    const size_t length = name_end - name_start;
    if (length < 4 || length > 11) return;
    if (equals_lower(name_start, name_end, "itemtype")) {  // each of its names (str.split())
      size_t i = start;
      while (true) {
        while (i < end && is_space(s_[i])) ++i;
        if (i >= end) break;
        size_t j = i;
        while (j < end && !is_space(s_[j])) ++j;
        count_schema_type(i, j);
        i = j;
      }
      return;
    }
    if (equals_lower(name_start, name_end, "hidden")) {
      e.hidden = true;
    } else if (equals_lower(name_start, name_end, "aria-hidden")) {
      strip(start, end);
      bool is_true = end - start == 4;
      for (size_t i = 0; i < 4 && is_true; ++i) {
        const Py_UCS4 c = s_[start + i];
        is_true = c < 128 && ascii_lower(c) == static_cast<Py_UCS4>("true"[i]);
      }
      e.hidden = e.hidden || is_true;
    } else if (equals_lower(name_start, name_end, "style")) {
      e.hidden = e.hidden || hidden_style(start, end);
    } else if (equals_lower(name_start, name_end, "role")) {
      strip(start, end);
      // value.strip().lower(): only ASCII letters and U+212A (KELVIN SIGN, lower-cased "k") lower-case
      // to ASCII, and every role name is ASCII
      Text role;
      for (size_t i = start; i < end; ++i) {
        const Py_UCS4 c = s_[i];
        if (c == 0x212A) {
          role.push_back('k');
        } else if (c < 128) {
          role.push_back(ascii_lower(c));
        } else {
          role.clear();
          role.push_back(0x80);  // no role
          break;
        }
      }
      e.role = static_cast<uint8_t>(role_id(role));
    } else if (equals_lower(name_start, name_end, "class")) {
      has_class_ = true;
      signature_key_.clear();
      signature_key_.push_back(static_cast<char32_t>(e.tag));
      join_split(s_ + start, end - start, signature_key_);
    } else if (equals_lower(name_start, name_end, "itemprop")) {
      strip(start, end);
      static const char *const declared[] = {"articleBody", "text", "reviewBody"};
      for (const char *want : declared) {
        const size_t want_length = std::strlen(want);
        if (end - start == want_length && std::equal(s_ + start, s_ + end, want,
                                                     [](CharT a, char b) { return static_cast<Py_UCS4>(a) == static_cast<Py_UCS4>(b); }))
          e.declared = true;
      }
    }
  }

  // segment._HIDDEN_STYLE.search(value): display\s*:\s*none or visibility\s*:\s*hidden, re.I
  bool hidden_style(size_t start, size_t end) const {
    for (size_t i = start; i < end; ++i) {
      if (style_match(i, end, "display", "none") || style_match(i, end, "visibility", "hidden")) return true;
    }
    return false;
  }

  bool style_match(size_t i, size_t end, const char *property, const char *value) const {
    for (const char *p = property; *p; ++p, ++i) {
      if (i >= end || !ci_equal(s_[i], *p)) return false;
    }
    while (i < end && is_space(s_[i])) ++i;
    if (i >= end || s_[i] != ':') return false;
    ++i;
    while (i < end && is_space(s_[i])) ++i;
    for (const char *p = value; *p; ++p, ++i) {
      if (i >= end || !ci_equal(s_[i], *p)) return false;
    }
    return true;
  }

  const CharT *s_;
  const size_t n_;
  PageData &page_;
  GilRelease &gil_;
  const Vocabulary &vocabulary_;
  std::unordered_set<std::string> unbalanced_;  // (find_raw_end)

  std::vector<int32_t> stack_;     // indices into page.elements; 0 is the root
  std::vector<int32_t> block_of_;  // per stack entry, the innermost block-level element at or below it
  Text text_;                      // pieces of the current block
  bool pieces_ = false;            // (a piece or a line break is in text_)
  int64_t words_ = 0, link_words_ = 0, links_ = 0, inline_ = 0, lines_ = 1;
  int in_link_ = 0, in_pre_ = 0;
  bool link_counted_ = false;

  Text name_, lowered_;
  Text signature_key_;  // the tag id, then the classes of the element being opened
  bool has_class_ = false;
  std::unordered_map<Text, int32_t> extra_ids_;
  std::vector<int32_t> signature_of_tag_;
};

// ---------------------------------------------------------------------------------------
// Features (features.block_features)

struct TextCounts {  // what the features read of a block's text
  bool ends = false;  // a stop followed by whitespace or the end
  int64_t stops = 0, digits = 0, upper_initial = 0, punctuation = 0, separators = 0;
};

TextCounts count_text(std::u32string_view t) {
  TextCounts out;
  const size_t n = t.size();
  for (size_t i = 0; i < n; ++i) {
    const Py_UCS4 c = t[i];
    const bool space = is_space(c);
    if (is_stop(c) && (i + 1 == n || is_space(t[i + 1]))) {
      out.stops += 1;
      out.ends = true;
    }
    if (is_decimal(c)) out.digits += 1;
    if (i == 0 ? is_upper_initial(c) : false) out.upper_initial += 1;
    if (space && i + 1 < n && is_upper_initial(t[i + 1])) out.upper_initial += 1;
    if (!space && !is_word(c)) out.punctuation += 1;
    if (is_separator(c)) out.separators += 1;
  }
  return out;
}

// The \w+ tokens of t, ASCII letters lower-cased (features._ascii_lower), each passed to f.
template <class F>
void each_token(std::u32string_view t, Text &scratch, F f) {
  const size_t n = t.size();
  size_t i = 0;
  while (i < n) {
    if (!is_word(t[i])) {
      ++i;
      continue;
    }
    scratch.clear();
    while (i < n && is_word(t[i])) scratch.push_back(ascii_lower(t[i++]));
    f(scratch);
  }
}

struct PairHash {
  size_t operator()(const std::pair<int32_t, int32_t> &p) const {
    uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(p.first)) << 32) | static_cast<uint32_t>(p.second);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
};

// features._declared_shares: the share of each block's word triples (\w+ tokens, ASCII lower
// case) that the declared texts (or the summaries) hold, NaN where those texts have no triple or
// the block has fewer than three tokens.  Only membership counts, so the triples of one side
// (the smaller one, in characters) are indexed and the other side's looked up: time is linear,
// memory that of the smaller side, whatever the size of a page's JSON-LD.

inline uint64_t mix64(uint64_t h) {  // murmur3's finaliser
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

// A per-process random seed for the hashes below (the tables hold tokens of the page).
uint64_t hash_seed() {
  static const uint64_t seed = [] {
    uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&x)) ^
                 static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    try {
      std::random_device device;
      x ^= (static_cast<uint64_t>(device()) << 32) ^ device();
    } catch (...) {  // (no entropy source: the address and the clock only)
    }
    return mix64(x) | 1;
  }();
  return seed;
}

constexpr uint32_t kNone = 0xFFFFFFFFu;

// Open addressing (linear probing, at most half full) over entries kept in insertion order.
// Key k's entries are found through index_; `same(entry, ...)` and `hash_of(entry)` are the
// caller's.
class Index {
 public:
  template <class Same>
  uint32_t find(uint64_t hash, Same same) const {
    if (index_.empty()) return kNone;
    for (size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const uint32_t e = index_[at];
      if (e == kNone) return kNone;
      if (same(e)) return e;
    }
  }
  // The slot for a new entry `e` of `hash` (call after find() gave kNone); `hash_of(entry)`
  // gives an entry's hash again when the table grows.
  template <class HashOf>
  void insert(uint64_t hash, uint32_t e, HashOf hash_of) {
    if (2 * (count_ + 1) > index_.size()) grow(hash_of);
    size_t at = hash & mask_;
    while (index_[at] != kNone) at = (at + 1) & mask_;
    index_[at] = e;
    ++count_;
  }

 private:
  template <class HashOf>
  void grow(HashOf hash_of) {
    std::vector<uint32_t> old;
    old.swap(index_);
    index_.assign(old.empty() ? 64 : old.size() * 2, kNone);
    mask_ = index_.size() - 1;
    for (uint32_t e : old) {
      if (e == kNone) continue;
      size_t at = hash_of(e) & mask_;
      while (index_[at] != kNone) at = (at + 1) & mask_;
      index_[at] = e;
    }
  }

  std::vector<uint32_t> index_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

// Tokens (ASCII lower case) -> dense ids.
class Tokens {
  struct Entry {
    uint64_t hash;
    size_t offset, length;
  };
  static uint64_t hash(const Text &w) {
    uint64_t h = hash_seed() ^ (w.size() * 0x9E3779B97F4A7C15ULL);
    size_t i = 0;
    for (; i + 1 < w.size(); i += 2) h = mix64(h ^ ((static_cast<uint64_t>(w[i]) << 32) | w[i + 1]));
    if (i < w.size()) h = mix64(h ^ w[i]);
    return h;
  }
  auto same(const Text &w) const {
    return [this, &w](uint32_t e) {
      const Entry &entry = entries_[e];
      return entry.length == w.size() && std::equal(w.begin(), w.end(), pool_.begin() + entry.offset);
    };
  }
  std::vector<Entry> entries_;
  Text pool_;
  Index index_;

 public:
  uint32_t find(const Text &w) const { return index_.find(hash(w), same(w)); }
  uint32_t intern(const Text &w) {
    const uint64_t h = hash(w);
    const uint32_t found = index_.find(h, same(w));
    if (found != kNone) return found;
    const uint32_t id = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{h, pool_.size(), w.size()});
    pool_.append(w);
    index_.insert(h, id, [this](uint32_t e) { return entries_[e].hash; });
    return id;
  }
};

// Word triples (token ids) -> dense slots, each with bits of which texts hold it.
class Triples {
  struct Entry {
    uint32_t a, b, c;
    uint8_t bits;
  };
  static uint64_t hash(uint32_t a, uint32_t b, uint32_t c) {
    return mix64(mix64(hash_seed() ^ ((static_cast<uint64_t>(a) << 32) | b)) ^ c);
  }
  auto same(uint32_t a, uint32_t b, uint32_t c) const {
    return [this, a, b, c](uint32_t e) {
      const Entry &entry = entries_[e];
      return entry.a == a && entry.b == b && entry.c == c;
    };
  }
  std::vector<Entry> entries_;
  Index index_;

 public:
  uint32_t find(uint32_t a, uint32_t b, uint32_t c) const { return index_.find(hash(a, b, c), same(a, b, c)); }
  uint32_t insert(uint32_t a, uint32_t b, uint32_t c) {
    const uint64_t h = hash(a, b, c);
    const uint32_t found = index_.find(h, same(a, b, c));
    if (found != kNone) return found;
    const uint32_t slot = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{a, b, c, 0});
    index_.insert(h, slot, [this](uint32_t e) { return hash(entries_[e].a, entries_[e].b, entries_[e].c); });
    return slot;
  }
  uint8_t &bits(uint32_t slot) { return entries_[slot].bits; }
  uint8_t bits(uint32_t slot) const { return entries_[slot].bits; }
};

void declared_shares(const PageData &page, std::vector<double> &declared_share, std::vector<double> &summary_share) {
  const size_t n = page.blocks.size();
  declared_share.assign(n, kNaN);
  summary_share.assign(n, kNaN);
  if (page.declared.empty() && page.summaries.empty()) return;
  size_t block_chars = 0, text_chars = 0;
  for (const Block &b : page.blocks) block_chars += b.text.size();
  for (const Text &t : page.declared) text_chars += t.size();
  for (const Text &t : page.summaries) text_chars += t.size();
  Tokens tokens;
  Triples triples;
  Text scratch;
  std::vector<int64_t> counts(n, 0);       // each block's tokens
  std::vector<int64_t> in_declared(n, 0), in_summary(n, 0);
  bool any_declared = false, any_summary = false;
  // Calls f(slot) for each triple of `text` (slot: kNone where the index does not hold it, or
  // where `add`, a new one); returns the text's token count.
  auto each_triple = [&](std::u32string_view text, bool add, auto f) {
    uint32_t a = kNone, b = kNone;
    int64_t count = 0;
    each_token(text, scratch, [&](const Text &w) {
      const uint32_t c = add ? tokens.intern(w) : tokens.find(w);
      if (++count >= 3) {
        if (add) {
          f(triples.insert(a, b, c));
        } else {
          f(a != kNone && b != kNone && c != kNone ? triples.find(a, b, c) : kNone);
        }
      }
      a = b;
      b = c;
    });
    return count;
  };
  if (text_chars <= block_chars) {
    // the texts' triples indexed, the blocks' looked up
    for (const Text &t : page.declared)
      if (each_triple(std::u32string_view(t), true, [&](uint32_t slot) { triples.bits(slot) |= 1; }) >= 3)
        any_declared = true;
    for (const Text &t : page.summaries)
      if (each_triple(std::u32string_view(t), true, [&](uint32_t slot) { triples.bits(slot) |= 2; }) >= 3)
        any_summary = true;
    for (size_t i = 0; i < n; ++i) {
      counts[i] = each_triple(page.text(page.blocks[i]), false, [&](uint32_t slot) {
        if (slot == kNone) return;
        in_declared[i] += triples.bits(slot) & 1;
        in_summary[i] += (triples.bits(slot) >> 1) & 1;
      });
    }
  } else {
    // the blocks' triples indexed (each block's slots kept), the texts' looked up
    std::vector<uint32_t> slots;
    std::vector<size_t> first(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      first[i] = slots.size();
      counts[i] = each_triple(page.text(page.blocks[i]), true, [&](uint32_t slot) { slots.push_back(slot); });
    }
    first[n] = slots.size();
    for (const Text &t : page.declared)
      if (each_triple(std::u32string_view(t), false, [&](uint32_t slot) {
            if (slot != kNone) triples.bits(slot) |= 1;
          }) >= 3)
        any_declared = true;
    for (const Text &t : page.summaries)
      if (each_triple(std::u32string_view(t), false, [&](uint32_t slot) {
            if (slot != kNone) triples.bits(slot) |= 2;
          }) >= 3)
        any_summary = true;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = first[i]; k < first[i + 1]; ++k) {
        in_declared[i] += triples.bits(slots[k]) & 1;
        in_summary[i] += (triples.bits(slots[k]) >> 1) & 1;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] < 3) continue;
    const double total = static_cast<double>(counts[i] - 2);
    if (any_declared) declared_share[i] = static_cast<double>(in_declared[i]) / total;
    if (any_summary) summary_share[i] = static_cast<double>(in_summary[i]) / total;
  }
}

// features._url_shape: 7 values
bool url_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool url_word(char32_t c) { return url_digit(c) || is_ascii_alpha(c) || c == '_'; }

void url_shape(const Text &url, double *out) {
  const size_t scheme = url.find(U"://");
  if (scheme == Text::npos) {
    out[0] = 0.0;
    for (int k = 1; k < 7; ++k) out[k] = kNaN;
    return;
  }
  const std::u32string_view rest = std::u32string_view(url).substr(scheme + 3);
  size_t path_start = rest.size();
  for (char32_t c : {U'/', U'?', U'#'}) path_start = std::min(path_start, rest.find(c));
  if (path_start == std::u32string_view::npos) path_start = rest.size();
  size_t path_end = rest.size();
  for (char32_t c : {U'?', U'#'}) {
    const size_t at = rest.find(c, path_start);
    if (at != std::u32string_view::npos) path_end = std::min(path_end, at);
  }
  const std::u32string_view path = rest.substr(path_start, path_end - path_start);
  bool query = false;
  if (path_end < rest.size() && rest[path_end] == U'?') {
    const size_t hash_at = rest.find(U'#', path_end);
    query = (hash_at == std::u32string_view::npos ? rest.size() : hash_at) > path_end + 1;
  }
  int64_t segments = 0;
  std::u32string_view last;
  for (size_t a = 0; a <= path.size();) {
    size_t b = path.find(U'/', a);
    if (b == std::u32string_view::npos) b = path.size();
    if (b > a) {
      ++segments;
      last = path.substr(a, b - a);
    }
    a = b + 1;
  }
  std::u32string_view stem = last;
  const size_t dot = last.rfind(U'.');
  if (dot != std::u32string_view::npos) {
    const size_t tail = last.size() - dot - 1;
    bool word = tail >= 2 && tail <= 5;
    for (size_t i = dot + 1; word && i < last.size(); ++i) word = url_word(last[i]);
    if (word) stem = last.substr(0, dot);
  }
  int64_t words = 0;
  bool in_piece = false;
  for (char32_t c : stem) {
    const bool cut = c == U'-' || c == U'_' || c == U'.';
    if (!cut && !in_piece) ++words;
    in_piece = !cut;
  }
  double date = 0.0;
  for (size_t i = 0; i + 5 < path.size(); ++i) {
    const bool century = (path[i] == U'1' && path[i + 1] == U'9') || (path[i] == U'2' && path[i + 1] == U'0');
    if (century && url_digit(path[i + 2]) && url_digit(path[i + 3]) && (path[i + 4] == U'/' || path[i + 4] == U'-') &&
        url_digit(path[i + 5])) {
      const size_t after = i + 6 < path.size() && url_digit(path[i + 6]) ? i + 7 : i + 6;
      if (after >= path.size() || !url_word(path[after])) {
        date = 1.0;
        break;
      }
    }
  }
  int64_t digits = 0, run = 0;
  for (char32_t c : last) {
    run = url_digit(c) ? run + 1 : 0;
    digits = std::max(digits, run);
  }
  out[0] = 1.0;
  out[1] = static_cast<double>(segments);
  out[2] = static_cast<double>(words);
  out[3] = date;
  out[4] = static_cast<double>(digits);
  out[5] = query ? 1.0 : 0.0;
  out[6] = !path.empty() && path.back() == U'/' ? 1.0 : 0.0;
}

constexpr int kPageKindCount = 1 + kSchemaFamilies + 7 + kCountedTagCount;  // len(features.PAGE_KIND_FEATURES)

// features.page_kind
void page_kind(const PageData &page, double *out) {
  const std::u32string_view og(page.og_type);
  auto starts = [&](std::u32string_view want) { return og.substr(0, want.size()) == want; };
  auto ends = [&](std::u32string_view want) {
    return og.size() >= want.size() && og.substr(og.size() - want.size()) == want;
  };
  int k = 0;
  if (og.empty()) {
    out[k++] = 0.0;
  } else if (starts(U"article") || ends(U"article") || og == U"blog") {
    out[k++] = 1.0;
  } else if (starts(U"product")) {
    out[k++] = 2.0;
  } else if (og == U"website") {
    out[k++] = 3.0;
  } else {
    out[k++] = 4.0;
  }
  for (int f = 0; f < kSchemaFamilies; ++f) out[k++] = std::log1p(static_cast<double>(page.schema_counts[f]));
  url_shape(page.canonical.empty() ? page.og_url : page.canonical, out + k);
  k += 7;
  for (int f = 0; f < kCountedTagCount; ++f) out[k++] = std::log1p(static_cast<double>(page.tag_counts[f]));
}

// Fills out[n * kFeatureCount]; logprobs: one per block, or null.
// log1p of a count (a whole number): under kCountLogs read from a table of libm's own log1p (the same numbers), as
// most of a row's logs are of small counts (its words, characters, an element's blocks, the next block's words).
constexpr int64_t kCountLogs = 2048;

const double *count_logs() {
  static const std::vector<double> table = [] {  // (made once, by the first page read; thread-safe)
    std::vector<double> logs(kCountLogs);
    for (int64_t k = 0; k < kCountLogs; ++k) {
      volatile double whole = static_cast<double>(k);  // (libm at run time, never a compile-time constant)
      logs[k] = std::log1p(whole);
    }
    return logs;
  }();
  return table.data();
}

inline double log1p_count(const double *logs, int64_t count) {
  return count >= 0 && count < kCountLogs ? logs[count] : std::log1p(static_cast<double>(count));
}

void block_features(const PageData &page, bool declares_item, const double *logprobs, size_t n_logprobs,
                    double *out) {
  const auto &blocks = page.blocks;
  const auto &elements = page.elements;
  const Element &root = elements[0];
  const size_t n = blocks.size();
  if (n == 0) return;
  const double *logs = count_logs();
  const Vocabulary &vocabulary = *g_vocabulary;
  auto feature_id = [&](int32_t tag) {
    return tag < static_cast<int32_t>(vocabulary.info.size()) ? vocabulary.info[tag].feature_id : 0;
  };
  // ancestry bits (_ancestry)
  std::vector<uint32_t> ancestry(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const Element &e = elements[i];
    uint32_t own = (e.tag < static_cast<int32_t>(vocabulary.info.size()) ? vocabulary.info[e.tag].ancestry : 0) |
                   role_bits(e.role);
    if (e.hidden) own |= 1u << 17;
    if (e.declared) own |= 1u << 18;
    ancestry[i] = own | (e.parent >= 0 ? ancestry[e.parent] : 0);
  }
  const int64_t page_words = std::max<int64_t>(1, root.words);
  std::vector<TextCounts> counts(n);
  for (size_t i = 0; i < n; ++i) counts[i] = count_text(page.text(blocks[i]));
  std::unordered_map<std::u32string_view, int64_t> repeats;
  for (const Block &b : blocks) repeats[page.text(b)] += 1;
  std::unordered_map<std::pair<int32_t, int32_t>, int64_t, PairHash> siblings;
  for (const Block &b : blocks) siblings[{elements[b.element].parent, elements[b.element].tag}] += 1;
  Text scratch;
  std::unordered_set<Text> title_words;
  each_token(std::u32string_view(page.title), scratch, [&](const Text &w) { title_words.insert(w); });

  // _block_parents
  auto block_parents = [&](int32_t index, size_t levels, int32_t chain[4]) {
    size_t length = 0;
    chain[length++] = index;
    int32_t at = elements[index].parent;
    while (at >= 0 && length < levels) {
      if (elements[at].block) chain[length++] = at;
      at = elements[at].parent;
    }
    return length;
  };

  // _best_container: scores in insertion order, the first of the highest
  std::vector<double> score(elements.size(), 0.0);
  std::vector<char> scored(elements.size(), 0);
  std::vector<int32_t> score_order;
  auto add_score = [&](int32_t at, double value) {
    if (!scored[at]) {
      scored[at] = 1;
      score_order.push_back(at);
      score[at] = 0 + value;
    } else {
      score[at] = score[at] + value;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    const Block &b = blocks[i];
    if (b.words < 10 || !counts[i].ends) continue;
    const double value = 1 + static_cast<double>(std::min<int64_t>(b.words, 100)) / 25;
    const int32_t at = b.element;
    add_score(at, value);
    int32_t parent = elements[at].parent;
    while (parent >= 0 && !elements[parent].block) parent = elements[parent].parent;
    if (parent >= 0) add_score(parent, value / 2);
  }
  int32_t best = -1;
  double best_share = 0.0;
  if (!score_order.empty()) {
    best = score_order[0];
    for (int32_t at : score_order)
      if (score[at] > score[best]) best = at;
    best_share = static_cast<double>(elements[best].words) / static_cast<double>(std::max<int64_t>(1, root.words));
  }

  std::vector<int32_t> longest(elements.size(), 0);
  for (const Block &b : blocks) {
    int32_t chain[4];
    const size_t length = block_parents(b.element, 3, chain);
    for (size_t k = 0; k < length; ++k) longest[chain[k]] = std::max(longest[chain[k]], b.words);
  }
  std::vector<int32_t> seen_in(elements.size(), 0);
  int32_t first = 0, last = 0;
  if (best >= 0) {
    first = elements[best].first_block;
    last = elements[best].last_block;
  }
  // title words in each block: (matching tokens, tokens)
  std::vector<std::pair<int64_t, int64_t>> title_hits(n, {0, 0});
  if (!title_words.empty()) {
    for (size_t i = 0; i < n; ++i) {
      int64_t hits = 0, tokens = 0;
      each_token(page.text(blocks[i]), scratch, [&](const Text &w) {
        tokens += 1;
        hits += title_words.count(w) ? 1 : 0;
      });
      title_hits[i] = {hits, tokens};
    }
  }
  int64_t heading_best = -1;
  double heading_share = 0.5;
  if (!title_words.empty()) {
    for (size_t i = 0; i < n; ++i) {
      const Block &b = blocks[i];
      if ((b.inline_bits & 256) && b.words) {
        const double share = static_cast<double>(title_hits[i].first) / static_cast<double>(title_hits[i].second);
        if (share > heading_share) {
          heading_best = static_cast<int64_t>(i);
          heading_share = share;
        }
      }
    }
  }
  // _regions
  int32_t regions[3];
  {
    const double shares[3] = {0.5, 0.8, 0.95};
    const int64_t total = root.long_words;
    for (int r = 0; r < 3; ++r) {
      int32_t found = -1;
      int64_t found_words = 0;
      if (total) {
        const double need = shares[r] * static_cast<double>(total);
        for (size_t i = 0; i < elements.size(); ++i) {
          const Element &e = elements[i];
          if (e.block && static_cast<double>(e.long_words) >= need &&
              (found < 0 || e.words < found_words || (e.words == found_words && static_cast<int32_t>(i) > found))) {
            found = static_cast<int32_t>(i);
            found_words = e.words;
          }
        }
      }
      regions[r] = found;
    }
  }
  // _repetition: groups of (parent, signature), in order of first appearance
  std::vector<int32_t> group_of(elements.size(), -1);
  std::vector<int64_t> group_count, group_words, group_links;
  {
    std::unordered_map<std::pair<int32_t, int32_t>, int32_t, PairHash> groups;
    for (size_t i = 1; i < elements.size(); ++i) {
      const Element &e = elements[i];
      auto it = groups.emplace(std::make_pair(e.parent, e.signature), static_cast<int32_t>(group_count.size()));
      if (it.second) {
        group_count.push_back(0);
        group_words.push_back(0);
        group_links.push_back(0);
      }
      const int32_t g = it.first->second;
      group_of[i] = g;
      group_count[g] += 1;
      group_words[g] += e.words;
      group_links[g] += e.link_words;
    }
  }
  int32_t top_group = -1;
  int64_t top_words = 0;
  for (size_t g = 0; g < group_count.size(); ++g) {
    if (group_count[g] >= 3 && group_words[g] > top_words) {
      top_group = static_cast<int32_t>(g);
      top_words = group_words[g];
    }
  }
  const double page_extra[3] = {
      static_cast<double>(root.long_words) / static_cast<double>(page_words),
      static_cast<double>(top_words) / static_cast<double>(page_words),
      top_group >= 0 ? static_cast<double>(group_links[top_group]) / static_cast<double>(std::max<int64_t>(1, top_words))
                     : kNaN};
  double page_logprob = kNaN;
  if (logprobs != nullptr) {
    std::vector<double> known;
    for (size_t i = 0; i < std::min(n, n_logprobs); ++i) {
      const double lp = logprobs[i];
      if (lp == lp && blocks[i].words >= 10) known.push_back(lp);
    }
    std::stable_sort(known.begin(), known.end());
    if (!known.empty()) page_logprob = known[known.size() / 2];
  }
  std::vector<double> declared_share, summary_share;
  declared_shares(page, declared_share, summary_share);
  double kind[kPageKindCount];
  page_kind(page, kind);

  const double log_root_words = log1p_count(logs, root.words);
  const double log_n = log1p_count(logs, n);
  const double root_link_share = static_cast<double>(root.link_words) / static_cast<double>(page_words);
  int64_t words_before = 0;
  for (size_t i = 0; i < n; ++i) {
    const Block &b = blocks[i];
    const TextCounts &tc = counts[i];
    double *row = out + i * kFeatureCount;
    size_t k = 0;
    const int64_t words = b.words;
    const double chars = static_cast<double>(std::max<int32_t>(1, b.chars));
    const double dwords = static_cast<double>(words);
    row[k++] = log1p_count(logs, words);
    row[k++] = log1p_count(logs, b.chars);
    row[k++] = words ? static_cast<double>(b.link_words) / dwords : (b.links ? 1.0 : 0.0);
    row[k++] = b.links;
    row[k++] = tc.ends ? 1.0 : 0.0;
    row[k++] = static_cast<double>(tc.stops);
    row[k++] = words ? static_cast<double>(b.chars) / dwords : 0.0;
    row[k++] = static_cast<double>(tc.digits) / chars;
    row[k++] = words ? static_cast<double>(tc.upper_initial) / dwords : 0.0;
    row[k++] = static_cast<double>(tc.punctuation) / chars;
    row[k++] = static_cast<double>(tc.separators) / static_cast<double>(std::max<int64_t>(1, words));
    row[k++] = b.lines;
    for (int bit = 0; bit < 9; ++bit) row[k++] = (b.inline_bits & (1 << bit)) ? 1.0 : 0.0;
    const Element &element = elements[b.element];
    row[k++] = feature_id(element.tag);
    row[k++] = element.depth;
    const uint32_t bits = ancestry[b.element];
    for (int bit = 0; bit < 20; ++bit) row[k++] = (bits & (1u << bit)) ? 1.0 : 0.0;
    int32_t chain[4];
    const size_t chain_length = block_parents(b.element, 4, chain);
    for (size_t level = 0; level < 4; ++level) {
      if (level < chain_length) {
        const Element &e = elements[chain[level]];
        const double ew = static_cast<double>(std::max<int32_t>(1, e.words));
        row[k++] = feature_id(e.tag);
        row[k++] = log1p_count(logs, e.words);
        row[k++] = static_cast<double>(e.link_words) / ew;
        row[k++] = log1p_count(logs, e.blocks);
        row[k++] = static_cast<double>(e.long_blocks) / static_cast<double>(std::max<int32_t>(1, e.blocks));
        row[k++] = static_cast<double>(e.elements) / ew;
        row[k++] = dwords / ew;
        row[k++] = static_cast<double>(e.words) / static_cast<double>(page_words);
      } else {
        for (int f = 0; f < 8; ++f) row[k++] = kNaN;
      }
    }
    row[k++] = static_cast<double>(i) / static_cast<double>(n);
    row[k++] = static_cast<double>(words_before) / static_cast<double>(page_words);
    row[k++] = static_cast<double>(page_words - words_before - words) / static_cast<double>(page_words);
    row[k++] = log_root_words;
    row[k++] = log_n;
    row[k++] = root_link_share;
    row[k++] = root.long_blocks;
    row[k++] = static_cast<double>(repeats[page.text(b)]);
    row[k++] = static_cast<double>(siblings[{element.parent, element.tag}]);
    const int64_t hits = title_hits[i].first, tokens = title_hits[i].second;
    row[k++] = tokens ? static_cast<double>(hits) / static_cast<double>(tokens) : 0.0;
    row[k++] = tokens && hits == tokens ? 1.0 : 0.0;
    const int32_t index = static_cast<int32_t>(i);
    auto holds = [&](int32_t e) { return elements[e].first_block <= index && index <= elements[e].last_block; };
    row[k++] = best >= 0 && holds(best) ? 1.0 : 0.0;
    row[k++] = best_share;
    row[k++] = declares_item ? 1.0 : 0.0;
    if (best >= 0) {
      row[k++] = index < first ? -1.0 : (index > last ? 1.0 : 0.0);
      const int64_t distance = index < first ? first - index : (index > last ? index - last : 0);
      row[k++] = static_cast<double>(distance) / static_cast<double>(n);
    } else {
      row[k++] = kNaN;
      row[k++] = kNaN;
    }
    row[k++] = static_cast<int64_t>(i) == heading_best ? 1.0 : 0.0;
    for (int r = 0; r < 3; ++r) row[k++] = regions[r] >= 0 && holds(regions[r]) ? 1.0 : 0.0;
    for (int r = 0; r < 3; ++r)
      row[k++] = regions[r] >= 0 ? static_cast<double>(elements[regions[r]].words) / static_cast<double>(page_words)
                                 : kNaN;
    // the nearest ancestor that is one of 3 or more like siblings
    double item[4] = {kNaN, kNaN, kNaN, kNaN};
    double item_links = kNaN, in_top = 0.0, max_share = 0.0;
    int32_t at = b.element;
    int hops = 0;
    while (at > 0 && hops < 12) {
      const Element &e = elements[at];
      const int32_t g = group_of[at];
      if (group_count[g] >= 3) {
        const double share = static_cast<double>(group_words[g]) / static_cast<double>(page_words);
        if (item[0] != item[0]) {
          item[0] = log1p_count(logs, group_count[g]);
          item[1] = share;
          item[2] = dwords / static_cast<double>(std::max<int32_t>(1, e.words));
          item[3] = hops;
          item_links = static_cast<double>(group_links[g]) / static_cast<double>(std::max<int64_t>(1, group_words[g]));
        }
        if (g == top_group) in_top = 1.0;
        if (share > max_share) max_share = share;
      }
      at = e.parent;
      hops += 1;
    }
    for (double v : item) row[k++] = v;
    row[k++] = max_share;
    const size_t chain3 = std::min<size_t>(chain_length, 3);
    for (size_t level = 1; level <= 2; ++level)
      row[k++] = level < chain3 ? log1p_count(logs, longest[chain[level]]) : kNaN;
    for (size_t level = 1; level <= 2; ++level) {
      if (level < chain3) {
        const int32_t seen = seen_in[chain[level]]++;
        row[k++] = static_cast<double>(seen) / static_cast<double>(std::max<int32_t>(1, elements[chain[level]].blocks));
      } else {
        row[k++] = kNaN;
      }
    }
    row[k++] = page_extra[0];
    row[k++] = page_extra[1];
    row[k++] = page_extra[2];
    row[k++] = in_top;
    row[k++] = item_links;
    for (int64_t j : {static_cast<int64_t>(i) - 1, static_cast<int64_t>(i) + 1}) {
      if (j >= 0 && j < static_cast<int64_t>(n)) {
        const Block &o = blocks[j];
        row[k++] = log1p_count(logs, o.words);
        row[k++] = o.words ? static_cast<double>(o.link_words) / static_cast<double>(o.words) : 1.0;
        row[k++] = counts[j].ends ? 1.0 : 0.0;
        row[k++] = o.element == b.element ? 1.0 : 0.0;
      } else {
        for (int f = 0; f < 4; ++f) row[k++] = kNaN;
      }
    }
    row[k++] = declared_share[i];
    row[k++] = summary_share[i];
    for (double v : kind) row[k++] = v;
    if (logprobs == nullptr) {
      row[k++] = kNaN;
      row[k++] = kNaN;
    } else {
      const double lp = logprobs[i];
      row[k++] = lp;
      row[k++] = lp - page_logprob;
    }
    words_before += words;
  }
}

// ---------------------------------------------------------------------------------------
// Python objects: Page

struct PageObject {
  PyObject_HEAD
  PageData *page;
};

void Page_dealloc(PageObject *self) {
  delete self->page;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

PyTypeObject PageType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject *from_view(std::u32string_view v) { return from_text(v.data(), v.size()); }

// A list of `n` items made by `item(i)` (a new reference, or nullptr with a Python error set).
template <class F>
PyObject *list_of(size_t n, F item) {
  PyObject *list = PyList_New(static_cast<Py_ssize_t>(n));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < n; ++i) {
    PyObject *value = item(i);
    if (value == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), value);
  }
  return list;
}

PyObject *Page_texts(PageObject *self, PyObject *) {
  const PageData &page = *self->page;
  return list_of(page.blocks.size(), [&](size_t i) { return from_view(page.text(page.blocks[i])); });
}

PyObject *Page_blocks(PageObject *self, PyObject *) {
  const PageData &page = *self->page;
  return list_of(page.blocks.size(), [&](size_t i) -> PyObject * {
    const Block &b = page.blocks[i];
    PyObject *text = from_view(page.text(b));
    return text == nullptr ? nullptr
                           : Py_BuildValue("(Niiiiiii)", text, b.element, b.words, b.link_words, b.chars, b.links,
                                           b.inline_bits, b.lines);
  });
}

PyObject *Page_elements(PageObject *self, PyObject *) {
  const PageData &page = *self->page;
  return list_of(page.elements.size(), [&](size_t i) -> PyObject * {
    const Element &e = page.elements[i];
    const Text tag = page.tag_name(e.tag);
    const Signature &sig = page.signatures[e.signature];
    Text signature = sig.tag >= 0 ? page.tag_name(sig.tag) : Text();
    if (sig.classes != nullptr) {
      signature.push_back(' ');
      signature.append(*sig.classes, 1, Text::npos);
    }
    PyObject *tag_str = from_text(tag.data(), tag.size());
    PyObject *sig_str = from_text(signature.data(), signature.size());
    if (tag_str == nullptr || sig_str == nullptr) {
      Py_XDECREF(tag_str);
      Py_XDECREF(sig_str);
      return nullptr;
    }
    // segment.Element.__slots__'s order
    return Py_BuildValue("(NiiNiNNiiiiiiiiiiN)", tag_str, e.parent, e.depth, PyBool_FromLong(e.block),
                         static_cast<int>(e.role), PyBool_FromLong(e.hidden), PyBool_FromLong(e.declared), e.words,
                         e.link_words, e.blocks, e.elements, e.links, e.first_block, e.last_block, e.chars,
                         e.long_blocks, e.long_words, sig_str);
  });
}

// segment.section_ends: per block, the last block of its innermost block-level element's nearest
// block-level ancestor (of two) that holds more blocks than it, else the page's last block
PyObject *Page_section_ends(PageObject *self, PyObject *) {
  const PageData &page = *self->page;
  const std::vector<Element> &elements = page.elements;
  const int32_t last = static_cast<int32_t>(page.blocks.size()) - 1;
  return list_of(page.blocks.size(), [&](size_t i) -> PyObject * {
    const int32_t own = elements[page.blocks[i].element].blocks;
    int32_t at = elements[page.blocks[i].element].parent, end = last;
    for (int hops = 0; at >= 0 && hops < 2; at = elements[at].parent) {
      if (!elements[at].block) continue;
      ++hops;
      if (elements[at].blocks > own) {
        end = std::min(last, elements[at].last_block);
        break;
      }
    }
    return PyLong_FromLong(end);
  });
}

PyObject *Page_features(PageObject *self, PyObject *args) {
  int declares_item = 0;
  PyObject *logprobs = Py_None;
  if (!PyArg_ParseTuple(args, "|pO", &declares_item, &logprobs)) return nullptr;
  const PageData &page = *self->page;
  const size_t n = page.blocks.size();
  std::vector<double> lps;
  if (logprobs != Py_None) {
    PyObject *seq = PySequence_Fast(logprobs, "logprobs must be a sequence of floats or None");
    if (seq == nullptr) return nullptr;
    const Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    lps.resize(m);
    for (Py_ssize_t i = 0; i < m; ++i) {
      lps[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
      if (lps[i] == -1.0 && PyErr_Occurred()) {
        Py_DECREF(seq);
        return nullptr;
      }
    }
    Py_DECREF(seq);
    if (lps.size() < n) {
      PyErr_Format(PyExc_IndexError, "logprobs has %zd values for %zd blocks", static_cast<Py_ssize_t>(lps.size()),
                   static_cast<Py_ssize_t>(n));
      return nullptr;
    }
  }
  PyObject *out = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n * kFeatureCount * sizeof(double)));
  if (out == nullptr) return nullptr;
  double *rows = reinterpret_cast<double *>(PyBytes_AS_STRING(out));
  {
    GilRelease gil;  // (the bytes object is not shared yet)
    block_features(page, declares_item != 0, logprobs == Py_None ? nullptr : lps.data(), lps.size(), rows);
  }
  return out;
}

PyObject *Page_get_title(PageObject *self, void *) { return from_text(self->page->title.data(), self->page->title.size()); }
PyObject *text_list(const std::vector<Text> &texts) {
  return list_of(texts.size(), [&](size_t i) { return from_text(texts[i].data(), texts[i].size()); });
}
PyObject *Page_get_declared(PageObject *self, void *) { return text_list(self->page->declared); }
PyObject *Page_get_summaries(PageObject *self, void *) { return text_list(self->page->summaries); }
PyObject *Page_get_chars(PageObject *self, void *) { return PyLong_FromLongLong(self->page->chars); }
PyObject *Page_get_truncated(PageObject *self, void *) { return PyBool_FromLong(self->page->truncated); }
Py_ssize_t Page_length(PageObject *self) { return static_cast<Py_ssize_t>(self->page->blocks.size()); }

PyMethodDef Page_methods[] = {
    {"texts", reinterpret_cast<PyCFunction>(Page_texts), METH_NOARGS, "texts() -> [str]: each block's text"},
    {"blocks", reinterpret_cast<PyCFunction>(Page_blocks), METH_NOARGS,
     "blocks() -> [(text, element, words, link_words, chars, links, inline, lines)]: segment.Block's fields"},
    {"elements", reinterpret_cast<PyCFunction>(Page_elements), METH_NOARGS,
     "elements() -> [tuple]: segment.Element's fields in its __slots__ order"},
    {"section_ends", reinterpret_cast<PyCFunction>(Page_section_ends), METH_NOARGS,
     "section_ends() -> [int]: segment.section_ends"},
    {"features", reinterpret_cast<PyCFunction>(Page_features), METH_VARARGS,
     "features(declares_item=False, logprobs=None) -> bytes: features.block_features as float64, row-major"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef Page_getset[] = {
    {"title", reinterpret_cast<getter>(Page_get_title), nullptr, "the page's title", nullptr},
    {"chars", reinterpret_cast<getter>(Page_get_chars), nullptr, "characters of its blocks (not whitespace)", nullptr},
    {"declared", reinterpret_cast<getter>(Page_get_declared), nullptr,
     "the articleBody / text strings of its JSON-LD scripts (segment.Page.declared)", nullptr},
    {"summaries", reinterpret_cast<getter>(Page_get_summaries), nullptr,
     "the contents of its <meta> descriptions (segment.Page.summaries)", nullptr},
    {"truncated", reinterpret_cast<getter>(Page_get_truncated), nullptr,
     "whether the page was read only up to MAX_BLOCKS blocks or MAX_ELEMENTS elements", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PySequenceMethods Page_sequence = {reinterpret_cast<lenfunc>(Page_length)};

bool ensure_tables() {
  if (g_vocabulary == nullptr) g_vocabulary = new Vocabulary();
  return load_entities();
}

PyObject *segment_html(PyObject *, PyObject *arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "segment_html() takes a str");
    return nullptr;
  }
  if (!ensure_tables()) return nullptr;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
  if (n >= INT32_MAX / 2) {  // (counts are 32-bit)
    PyErr_SetString(PyExc_ValueError, "page too long for segment_html (a billion characters or more)");
    return nullptr;
  }
  std::unique_ptr<PageData> page(new PageData);
  const int kind = PyUnicode_KIND(arg);
  const void *data = PyUnicode_DATA(arg);
  bool ok;
  {
    GilRelease gil;  // (the str is immutable and held by the caller)
    if (kind == PyUnicode_1BYTE_KIND) {
      ok = Segmenter<Py_UCS1>(static_cast<const Py_UCS1 *>(data), n, *page, gil).run();
    } else if (kind == PyUnicode_2BYTE_KIND) {
      ok = Segmenter<Py_UCS2>(static_cast<const Py_UCS2 *>(data), n, *page, gil).run();
    } else {
      ok = Segmenter<Py_UCS4>(static_cast<const Py_UCS4 *>(data), n, *page, gil).run();
    }
  }
  if (!ok) return nullptr;
  PageObject *self = PyObject_New(PageObject, &PageType);
  if (self == nullptr) return nullptr;
  self->page = page.release();
  return reinterpret_cast<PyObject *>(self);
}

PyObject *unescape_html(PyObject *, PyObject *arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "unescape_html() takes a str");
    return nullptr;
  }
  if (!ensure_tables()) return nullptr;
  Text in, out;
  to_text(arg, in);
  unescape(in.data(), 0, in.size(), out);
  return from_text(out.data(), out.size());
}

// ---------------------------------------------------------------------------------------
// Forest (forest.Forest)

struct Node {
  int32_t feature;  // -1: a leaf
  int32_t left, right;
  uint8_t missing;  // 0: "none", 1: "zero", 2: "nan"
  bool default_left;
  bool categorical;
  double threshold;
  double value;
  int32_t categories_begin, categories_end;  // into categories (sorted)
};

// A node as predict walks it: 16 bytes (a `Node` takes 40), the two children of a node side
// by side (left, then right; each tree's nodes in breadth-first order), so that the next node of
// a walk is one add away.  A leaf goes on to itself (its `left`; `split` +inf and kNanLeft send
// every value left), so that a walk can take as many steps as its tree is deep without asking
// at each step whether it has arrived; its value is in ForestData::leaf_values.
struct FlatNode {
  union {
    double split;  // the threshold (a leaf: +inf)
    struct {
      int32_t begin, end;  // a categorical split's categories (into ForestData::categories)
    } cats;
  };
  int32_t left;     // the left child; the right one is left + 1 (a leaf: itself)
  int16_t feature;  // the value read: a column of predict's `Columns` (a leaf: column 0, 0.0); kSlow's: of the row
  uint8_t missing;  // as Node's
  uint8_t flags;    // kDefaultLeft | kCategorical | kNanLeft | kSlow | kLeaf
};
static_assert(sizeof(FlatNode) == 16, "FlatNode is meant to be 16 bytes");
// kNanLeft: where a NaN goes, for a plain numeric split (missing "none": as 0.0; "nan": the
// default side); kSlow: a split `step` decides (categorical, or missing "zero").
constexpr uint8_t kDefaultLeft = 1, kCategorical = 2, kNanLeft = 4, kSlow = 8, kLeaf = 16;

struct ForestData {
  std::vector<Node> nodes;  // as read from the spec (read_tree checks them)
  std::vector<int32_t> roots;
  std::vector<int64_t> categories;
  int32_t max_feature = -1;
  std::vector<FlatNode> flat;  // what predict walks (flatten)
  std::vector<double> leaf_values;  // each flat node's value where it is a leaf (else 0)
  std::vector<int32_t> flat_roots;
  std::vector<int32_t> depths;  // each tree's depth: the steps from its root to its deepest leaf
  std::vector<uint8_t> slow;  // whether each tree has a kSlow node
  int32_t stopped = -1;  // a leaf of value 0, in no tree: where a walk that met a fault goes
  // The columns a plain numeric split reads (predict copies them out of each row): column 0 is 0.0 (what a leaf
  // reads), each other a feature with its NaN as -inf (where its splits send a NaN left) or +inf (right), so that
  // `value <= split` alone goes where `step` goes, NaN or not (rows of a page nearly always hold a NaN feature).
  std::vector<int32_t> column_feature;  // each column's feature (column 0: -1)
  std::vector<double> column_nan;       // what a NaN of it reads as
  // The categorical splits' columns, after those (flatten): each is 0.0 where its split sends the row left, else
  // 1.0, so that such a split is a plain `value <= 0.5` and its tree is walked as fast as any (the 55 of the shipped
  // block forest's 100 trees that hold one asked every node whether it was one: ~22 ns a row a tree, not ~14).  Each
  // is a feature and a set of categories (nodes testing the same share one); `category_mask`: those under 64, as bits.
  std::vector<int32_t> category_column_feature;
  std::vector<int32_t> category_column_begin, category_column_end;  // into `categories`
  std::vector<uint64_t> category_mask;
  // The nodes and `slow` as `step` reads them, categorical splits and all: a group of rows one of which holds +inf
  // in a categorical feature walks these, so that a row faults where it meets such a split, as forest.py's does.
  std::vector<FlatNode> flat_exact;
  std::vector<uint8_t> slow_exact;
  // The linear model added to the trees' sum (forest.py's "linear"; none where `has_linear` is false): `bias`,
  // then each numeric term (a value that is not finite adds its `missing`; another is held within [low, high],
  // the values it was trained on, and adds weight * value, or weight * copysign(log1p(|value|), value) where
  // `log`), then each categorical term (the weight of the value it equals).
  bool has_linear = false;
  double linear_bias = 0.0;
  std::vector<int32_t> linear_feature;
  std::vector<uint8_t> linear_log;
  std::vector<double> linear_weight, linear_missing, linear_low, linear_high;
  std::vector<int32_t> category_feature;
  std::vector<int32_t> category_begin;  // each categorical term's values and weights from here (one more: the end)
  std::vector<double> category_value, category_weight;
  // log1p of 0 .. kSmallLogs - 1, by libm's log1p itself (the same numbers): most log terms read counts
  std::vector<double> small_logs;
  // The network added after the linear model (forest.py's "network"; none where `has_network` is false): its
  // inputs (each numeric feature as the linear model reads it, 0 where not finite; 1 where each `net_missing`
  // feature is not finite; 1 where each `net_category` feature equals its value), `net_units` ReLU units over
  // them (`net_weight`: input-major, `net_units` a row), their output and bias, the score held within `net_bound`.
  bool has_network = false;
  std::vector<int32_t> net_feature, net_missing, net_category;
  std::vector<uint8_t> net_log;
  std::vector<double> net_low, net_high, net_category_value;
  size_t net_units = 0;
  std::vector<double> net_weight, net_bias, net_output;
  double net_output_bias = 0.0, net_bound = 0.0;
};
constexpr int kSmallLogs = 1024;

// `f.nodes` laid out as `f.flat`; false (with a Python error) where a feature index does not fit.
bool flatten(ForestData &f) {
  if (f.max_feature > INT16_MAX) {
    PyErr_SetString(PyExc_ValueError, "the forest reads more features than the compiled reader can index");
    return false;
  }
  f.flat.clear();
  f.leaf_values.clear();
  f.flat_roots.clear();
  f.depths.clear();
  f.flat.reserve(f.nodes.size() + 1);
  const double inf = std::numeric_limits<double>::infinity();
  auto leaf = [&](int32_t slot, double value) {
    FlatNode out = {};
    out.split = inf;
    out.left = slot;
    out.flags = kNanLeft | kLeaf;
    f.flat[slot] = out;
    f.leaf_values[slot] = value;
  };
  std::vector<std::pair<int32_t, int32_t>> queue;  // (node in f.nodes, its slot in f.flat)
  std::vector<int32_t> level;  // each queued node's depth
  for (int32_t root : f.roots) {
    const int32_t slot = static_cast<int32_t>(f.flat.size());
    f.flat_roots.push_back(slot);
    f.flat.emplace_back();
    f.leaf_values.push_back(0.0);
    queue.assign(1, {root, slot});
    level.assign(1, 0);
    int32_t depth = 0;
    for (size_t q = 0; q < queue.size(); ++q) {
      const Node &node = f.nodes[queue[q].first];
      depth = std::max(depth, level[q]);
      if (node.feature < 0) {
        leaf(queue[q].second, node.value);
        continue;
      }
      FlatNode out = {};
      out.feature = static_cast<int16_t>(node.feature);
      out.missing = node.missing;
      out.flags = static_cast<uint8_t>((node.default_left ? kDefaultLeft : 0) | (node.categorical ? kCategorical : 0));
      if (node.categorical) {
        out.cats.begin = node.categories_begin;
        out.cats.end = node.categories_end;
        out.flags |= kSlow;
      } else {
        out.split = node.threshold;
        if (node.missing == 1) {
          out.flags |= kSlow;
        } else if (node.missing == 2 ? node.default_left : 0.0 <= node.threshold) {
          out.flags |= kNanLeft;
        }
      }
      out.left = static_cast<int32_t>(f.flat.size());
      f.flat.emplace_back();
      f.flat.emplace_back();
      f.leaf_values.push_back(0.0);
      f.leaf_values.push_back(0.0);
      queue.emplace_back(node.left, out.left);
      queue.emplace_back(node.right, out.left + 1);
      level.push_back(level[q] + 1);
      level.push_back(level[q] + 1);
      f.flat[queue[q].second] = out;
    }
    f.depths.push_back(depth);
  }
  // each plain numeric split to its column; a split where -inf or +inf would not go as the NaN it stands for
  // (a NaN or infinite threshold: none in a trained forest) goes by `step`
  f.column_feature.assign(1, -1);
  f.column_nan.assign(1, 0.0);
  std::vector<int32_t> column(2 * static_cast<size_t>(f.max_feature + 1), 0);  // (feature, NaN left) -> column
  for (FlatNode &node : f.flat) {
    if (node.flags & kLeaf) {
      node.feature = 0;
      continue;
    }
    if (node.flags & kSlow) continue;
    const bool left = node.flags & kNanLeft;
    if (!std::isfinite(node.split)) {
      node.flags |= kSlow;
      continue;
    }
    int32_t &at = column[2 * static_cast<size_t>(node.feature) + (left ? 1 : 0)];
    if (at == 0) {
      at = static_cast<int32_t>(f.column_feature.size());
      f.column_feature.push_back(node.feature);
      f.column_nan.push_back(left ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    }
    if (at > INT16_MAX) {
      PyErr_SetString(PyExc_ValueError, "the forest reads more features than the compiled reader can index");
      return false;
    }
    node.feature = static_cast<int16_t>(at);
  }
  f.slow.assign(f.flat_roots.size(), 0);
  for (size_t t = 0; t < f.flat_roots.size(); ++t) {  // (a tree's nodes: from its root to the next tree's)
    const size_t end = t + 1 < f.flat_roots.size() ? static_cast<size_t>(f.flat_roots[t + 1]) : f.flat.size();
    for (size_t i = static_cast<size_t>(f.flat_roots[t]); i < end; ++i) f.slow[t] |= (f.flat[i].flags & kSlow) != 0;
  }
  f.stopped = static_cast<int32_t>(f.flat.size());
  f.flat.emplace_back();
  f.leaf_values.push_back(0.0);
  leaf(f.stopped, 0.0);
  // each categorical split to a column of its own (one per feature and set of categories), after the numeric ones
  f.flat_exact = f.flat;
  f.slow_exact = f.slow;
  f.category_column_feature.clear();
  f.category_column_begin.clear();
  f.category_column_end.clear();
  f.category_mask.clear();
  std::map<std::pair<int32_t, std::vector<int64_t>>, int32_t> category_columns;
  const size_t numeric = f.column_feature.size();
  for (size_t t = 0; t < f.flat_roots.size(); ++t) {
    const size_t end = t + 1 < f.flat_roots.size() ? static_cast<size_t>(f.flat_roots[t + 1]) : f.flat.size() - 1;
    bool slow = false;
    for (size_t i = static_cast<size_t>(f.flat_roots[t]); i < end; ++i) {
      FlatNode &node = f.flat[i];
      if ((node.flags & kCategorical) && !(node.flags & kLeaf)) {
        const int32_t feature = f.flat_exact[i].feature;  // (flat_exact: the feature, as `step` reads the row)
        const auto first = f.categories.begin();
        std::pair<int32_t, std::vector<int64_t>> key(
            feature, std::vector<int64_t>(first + node.cats.begin, first + node.cats.end));
        auto found = category_columns.find(key);
        int32_t column;
        if (found != category_columns.end()) {
          column = found->second;
        } else {
          column = static_cast<int32_t>(numeric + f.category_column_feature.size());
          uint64_t mask = 0;
          for (int64_t c : key.second)
            if (c >= 0 && c < 64) mask |= uint64_t{1} << c;
          f.category_column_feature.push_back(feature);
          f.category_column_begin.push_back(node.cats.begin);
          f.category_column_end.push_back(node.cats.end);
          f.category_mask.push_back(mask);
          category_columns.emplace(std::move(key), column);
        }
        if (column > INT16_MAX) {
          PyErr_SetString(PyExc_ValueError, "the forest reads more features than the compiled reader can index");
          return false;
        }
        node.split = 0.5;
        node.feature = static_cast<int16_t>(column);
        node.flags = static_cast<uint8_t>(node.flags & ~(kCategorical | kSlow));
      }
      slow |= (node.flags & kSlow) != 0;
    }
    f.slow[t] = slow;
  }
  return true;
}

struct ForestObject {
  PyObject_HEAD
  ForestData *forest;
};

PyTypeObject ForestType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject *list_item(PyObject *tree, const char *key, Py_ssize_t size) {
  PyObject *list = PyDict_GetItemString(tree, key);
  if (list == nullptr || !PyList_Check(list) || PyList_GET_SIZE(list) != size) {
    PyErr_Format(PyExc_ValueError, "each tree needs a list \"%s\" of one entry per node", key);
    return nullptr;
  }
  return list;
}

bool read_tree(PyObject *tree, ForestData &f) {
  if (!PyDict_Check(tree)) {
    PyErr_SetString(PyExc_TypeError, "each tree must be a dict");
    return false;
  }
  PyObject *feature = PyDict_GetItemString(tree, "feature");
  if (feature == nullptr || !PyList_Check(feature) || PyList_GET_SIZE(feature) == 0) {
    PyErr_SetString(PyExc_ValueError, "each tree needs a non-empty list \"feature\"");
    return false;
  }
  const Py_ssize_t size = PyList_GET_SIZE(feature);
  PyObject *threshold = list_item(tree, "threshold", size), *categories = list_item(tree, "categories", size),
           *missing = list_item(tree, "missing", size), *default_left = list_item(tree, "default_left", size),
           *left = list_item(tree, "left", size), *right = list_item(tree, "right", size),
           *value = list_item(tree, "value", size);
  if (!threshold || !categories || !missing || !default_left || !left || !right || !value) return false;
  const int32_t base = static_cast<int32_t>(f.nodes.size());
  f.roots.push_back(base);
  for (Py_ssize_t i = 0; i < size; ++i) {
    Node node = {};
    const long feat = PyLong_AsLong(PyList_GET_ITEM(feature, i));
    if (feat == -1 && PyErr_Occurred()) return false;
    if (feat >= INT32_MAX) {
      PyErr_SetString(PyExc_ValueError, "feature index too large");
      return false;
    }
    node.feature = feat < 0 ? -1 : static_cast<int32_t>(feat);
    if (node.feature < 0) {
      node.value = PyFloat_AsDouble(PyList_GET_ITEM(value, i));
      if (node.value == -1.0 && PyErr_Occurred()) return false;
      f.nodes.push_back(node);
      continue;
    }
    f.max_feature = std::max(f.max_feature, node.feature);
    const long l = PyLong_AsLong(PyList_GET_ITEM(left, i)), r = PyLong_AsLong(PyList_GET_ITEM(right, i));
    if (PyErr_Occurred()) return false;
    if (l < 0 || l >= size || r < 0 || r >= size) {
      PyErr_SetString(PyExc_ValueError, "a child index is outside its tree");
      return false;
    }
    node.left = base + static_cast<int32_t>(l);
    node.right = base + static_cast<int32_t>(r);
    PyObject *cats = PyList_GET_ITEM(categories, i);
    if (cats != Py_None) {
      PyObject *seq = PySequence_Fast(cats, "categories must be a list of ints or None");
      if (seq == nullptr) return false;
      node.categorical = true;
      node.categories_begin = static_cast<int32_t>(f.categories.size());
      for (Py_ssize_t c = 0; c < PySequence_Fast_GET_SIZE(seq); ++c) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, c);
        if (PyFloat_Check(item)) {  // an integral float is the int it equals; any other matches nothing
          const double d = PyFloat_AS_DOUBLE(item);
          if (d == std::floor(d) && std::fabs(d) < 9e18) f.categories.push_back(static_cast<int64_t>(d));
          continue;
        }
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
        if (v == -1 && PyErr_Occurred()) {
          Py_DECREF(seq);
          return false;
        }
        if (!overflow) f.categories.push_back(v);
      }
      Py_DECREF(seq);
      node.categories_end = static_cast<int32_t>(f.categories.size());
      std::sort(f.categories.begin() + node.categories_begin, f.categories.end());
    } else {
      node.threshold = PyFloat_AsDouble(PyList_GET_ITEM(threshold, i));
      if (node.threshold == -1.0 && PyErr_Occurred()) return false;
      PyObject *kind = PyList_GET_ITEM(missing, i);
      if (PyUnicode_Check(kind)) {
        if (PyUnicode_CompareWithASCIIString(kind, "nan") == 0) node.missing = 2;
        else if (PyUnicode_CompareWithASCIIString(kind, "zero") == 0) node.missing = 1;
      }
      const int dl = PyObject_IsTrue(PyList_GET_ITEM(default_left, i));
      if (dl < 0) return false;
      node.default_left = dl != 0;
    }
    f.nodes.push_back(node);
  }
  // every walk from the root ends at a leaf (forest.py's loop would not end on a cycle)
  std::vector<uint8_t> state(size, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<int32_t, int>> path = {{0, 0}};
  state[0] = 1;
  while (!path.empty()) {
    auto &top = path.back();
    const Node &node = f.nodes[base + top.first];
    if (node.feature < 0 || top.second == 2) {
      state[top.first] = 2;
      path.pop_back();
      continue;
    }
    const int32_t next = (top.second++ == 0 ? node.left : node.right) - base;
    if (state[next] == 1) {
      PyErr_SetString(PyExc_ValueError, "a tree has a cycle");
      return false;
    }
    if (state[next] == 0) {
      state[next] = 1;
      path.emplace_back(next, 0);
    }
  }
  return true;
}

// The numbers of `key` in `dict` (a list of numbers; `count` of them unless -1), appended to `out`.
template <typename T>
bool read_numbers(PyObject *dict, const char *key, Py_ssize_t count, std::vector<T> &out) {
  PyObject *list = PyDict_GetItemString(dict, key);
  if (list == nullptr || !PyList_Check(list) || (count >= 0 && PyList_GET_SIZE(list) != count)) {
    PyErr_Format(PyExc_ValueError, "the linear model or network needs a list \"%s\" of one number per term", key);
    return false;
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    const double value = PyFloat_AsDouble(PyList_GET_ITEM(list, i));
    if (value == -1.0 && PyErr_Occurred()) return false;
    out.push_back(static_cast<T>(value));
  }
  return true;
}

// f.small_logs, for log1p_of (the linear model's and the network's log terms).
void fill_small_logs(ForestData &f) {
  if (!f.small_logs.empty()) return;
  for (int k = 0; k < kSmallLogs; ++k) {
    volatile double whole = k;  // (libm's log1p at run time, as a row's value gets: never a compile-time constant)
    f.small_logs.push_back(std::log1p(whole));
  }
}

// forest.py's "linear" part of a spec into `f` (none where the spec has none).
bool read_linear(PyObject *spec, ForestData &f) {
  PyObject *linear = PyDict_GetItemString(spec, "linear");
  if (linear == nullptr || linear == Py_None) return true;
  if (!PyDict_Check(linear)) {
    PyErr_SetString(PyExc_TypeError, "the forest's \"linear\" must be a dict");
    return false;
  }
  PyObject *bias = PyDict_GetItemString(linear, "bias");
  f.linear_bias = bias == nullptr ? -1.0 : PyFloat_AsDouble(bias);
  if (bias == nullptr || (f.linear_bias == -1.0 && PyErr_Occurred())) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the linear model needs a number \"bias\"");
    return false;
  }
  std::vector<double> features, categorical;
  if (!read_numbers(linear, "feature", -1, features)) return false;
  const Py_ssize_t n = static_cast<Py_ssize_t>(features.size());
  std::vector<double> logs;
  if (!read_numbers(linear, "log", n, logs) || !read_numbers(linear, "weight", n, f.linear_weight) ||
      !read_numbers(linear, "missing", n, f.linear_missing) || !read_numbers(linear, "low", n, f.linear_low) ||
      !read_numbers(linear, "high", n, f.linear_high) ||
      !read_numbers(linear, "category_feature", -1, categorical)) {
    return false;
  }
  for (size_t i = 0; i < features.size(); ++i) f.linear_log.push_back(logs[i] != 0.0);
  for (const std::vector<double> *from : {&features, &categorical}) {
    for (const double feature : *from) {
      if (!(feature >= 0 && feature <= INT16_MAX && feature == std::floor(feature))) {
        PyErr_SetString(PyExc_ValueError, "a linear term's feature index is not a column");
        return false;
      }
      (from == &features ? f.linear_feature : f.category_feature).push_back(static_cast<int32_t>(feature));
    }
  }
  PyObject *values = PyDict_GetItemString(linear, "category_values");
  PyObject *weights = PyDict_GetItemString(linear, "category_weights");
  const Py_ssize_t m = static_cast<Py_ssize_t>(categorical.size());
  if (values == nullptr || weights == nullptr || !PyList_Check(values) || !PyList_Check(weights) ||
      PyList_GET_SIZE(values) != m || PyList_GET_SIZE(weights) != m) {
    PyErr_SetString(PyExc_ValueError, "the linear model needs lists \"category_values\" and \"category_weights\" "
                                      "of one list per categorical term");
    return false;
  }
  for (Py_ssize_t c = 0; c < m; ++c) {
    f.category_begin.push_back(static_cast<int32_t>(f.category_value.size()));
    PyObject *pair[2] = {PyList_GET_ITEM(values, c), PyList_GET_ITEM(weights, c)};
    Py_ssize_t sizes[2];
    for (int k = 0; k < 2; ++k) {
      if (!PyList_Check(pair[k])) {
        PyErr_SetString(PyExc_ValueError, "each categorical term's values and weights must be lists");
        return false;
      }
      sizes[k] = PyList_GET_SIZE(pair[k]);
    }
    if (sizes[0] != sizes[1]) {
      PyErr_SetString(PyExc_ValueError, "a categorical term needs one weight per value");
      return false;
    }
    for (Py_ssize_t i = 0; i < sizes[0]; ++i) {
      const double value = PyFloat_AsDouble(PyList_GET_ITEM(pair[0], i));
      const double weight = PyFloat_AsDouble(PyList_GET_ITEM(pair[1], i));
      if (PyErr_Occurred()) return false;
      f.category_value.push_back(value);
      f.category_weight.push_back(weight);
    }
  }
  f.category_begin.push_back(static_cast<int32_t>(f.category_value.size()));
  for (const int32_t feature : f.linear_feature) f.max_feature = std::max(f.max_feature, feature);
  for (const int32_t feature : f.category_feature) f.max_feature = std::max(f.max_feature, feature);
  fill_small_logs(f);
  f.has_linear = true;
  return true;
}

// A number of `dict` (a Python float or int) into `out`.
bool read_number(PyObject *dict, const char *key, double &out) {
  PyObject *value = PyDict_GetItemString(dict, key);
  out = value == nullptr ? -1.0 : PyFloat_AsDouble(value);
  if (value == nullptr || (out == -1.0 && PyErr_Occurred())) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "the network needs a number \"%s\"", key);
    return false;
  }
  return true;
}

// Feature indices (numbers read by read_numbers) as columns into `out`.
bool as_columns(const std::vector<double> &from, std::vector<int32_t> &out, ForestData &f) {
  for (const double feature : from) {
    if (!(feature >= 0 && feature <= INT16_MAX && feature == std::floor(feature))) {
      PyErr_SetString(PyExc_ValueError, "a network input's feature index is not a column");
      return false;
    }
    out.push_back(static_cast<int32_t>(feature));
    f.max_feature = std::max(f.max_feature, out.back());
  }
  return true;
}

// forest.py's "network" part of a spec into `f` (none where the spec has none).
bool read_network(PyObject *spec, ForestData &f) {
  PyObject *network = PyDict_GetItemString(spec, "network");
  if (network == nullptr || network == Py_None) return true;
  if (!PyDict_Check(network)) {
    PyErr_SetString(PyExc_TypeError, "the forest's \"network\" must be a dict");
    return false;
  }
  std::vector<double> features, logs, missing, categorical;
  if (!read_numbers(network, "feature", -1, features)) return false;
  const Py_ssize_t n = static_cast<Py_ssize_t>(features.size());
  if (!read_numbers(network, "log", n, logs) || !read_numbers(network, "low", n, f.net_low) ||
      !read_numbers(network, "high", n, f.net_high) || !read_numbers(network, "missing_feature", -1, missing) ||
      !read_numbers(network, "category_feature", -1, categorical) ||
      !read_numbers(network, "category_value", static_cast<Py_ssize_t>(categorical.size()), f.net_category_value) ||
      !read_numbers(network, "bias", -1, f.net_bias) ||
      !read_numbers(network, "output", static_cast<Py_ssize_t>(f.net_bias.size()), f.net_output) ||
      !read_number(network, "output_bias", f.net_output_bias) || !read_number(network, "bound", f.net_bound)) {
    return false;
  }
  if (!as_columns(features, f.net_feature, f) || !as_columns(missing, f.net_missing, f) ||
      !as_columns(categorical, f.net_category, f)) {
    return false;
  }
  for (const double log : logs) f.net_log.push_back(log != 0.0);
  fill_small_logs(f);
  f.net_units = f.net_bias.size();
  const size_t inputs = features.size() + missing.size() + categorical.size();
  PyObject *weight = PyDict_GetItemString(network, "weight");
  if (weight == nullptr || !PyList_Check(weight) || static_cast<size_t>(PyList_GET_SIZE(weight)) != inputs) {
    PyErr_SetString(PyExc_ValueError, "the network needs a list \"weight\" of one list per input");
    return false;
  }
  for (size_t i = 0; i < inputs; ++i) {
    PyObject *row = PyList_GET_ITEM(weight, static_cast<Py_ssize_t>(i));
    if (!PyList_Check(row) || static_cast<size_t>(PyList_GET_SIZE(row)) != f.net_units) {
      PyErr_SetString(PyExc_ValueError, "each of the network's \"weight\" lists needs one weight per unit");
      return false;
    }
    for (size_t u = 0; u < f.net_units; ++u) {
      const double value = PyFloat_AsDouble(PyList_GET_ITEM(row, static_cast<Py_ssize_t>(u)));
      if (value == -1.0 && PyErr_Occurred()) return false;
      f.net_weight.push_back(value);
    }
  }
  f.has_network = true;
  return true;
}

// Rows walk a tree this many at a time, side by side: their walks do not wait on each other's
// loads, so the processor overlaps them.  Each row's leaves are still added tree by tree in the
// forest's order (the same sums, to the bit, as one row at a time).
constexpr size_t kLanes = 8;

// log1p of `a` (not negative): a whole number under kSmallLogs from ForestData::small_logs.
inline double log1p_of(const ForestData &f, double a) {
  if (a < kSmallLogs) {
    const int whole = static_cast<int>(a);
    if (static_cast<double>(whole) == a) return f.small_logs[whole];
  }
  return std::log1p(a);
}

// The linear model's part of the scores of `lanes` rows, added to their trees' sums in `totals` (after the trees:
// forest.py adds it in this order).  The rows side by side, each row's terms still added in the spec's order (the
// same sums to the bit: the rows' additions only interleave, and none waits on another's); log1p by log1p_of.
inline void add_linear_lanes(const ForestData &f, const double *const *rows, size_t lanes, double *totals) {
  for (size_t k = 0; k < lanes; ++k) totals[k] += f.linear_bias;
  for (size_t i = 0; i < f.linear_feature.size(); ++i) {
    const int32_t feature = f.linear_feature[i];
    const double missing = f.linear_missing[i], low = f.linear_low[i], high = f.linear_high[i];
    const double weight = f.linear_weight[i];
    const bool log = f.linear_log[i];
    for (size_t k = 0; k < lanes; ++k) {
      const double raw = rows[k][feature];
      if (raw - raw != 0.0) {  // (NaN or infinite)
        totals[k] += missing;
        continue;
      }
      const double value = std::min(std::max(raw, low), high);  // (forest.py's order)
      if (log) {
        totals[k] += weight * std::copysign(log1p_of(f, std::fabs(value)), value);
      } else {
        totals[k] += weight * value;
      }
    }
  }
  for (size_t c = 0; c < f.category_feature.size(); ++c) {
    for (size_t k = 0; k < lanes; ++k) {
      const double value = rows[k][f.category_feature[c]];
      for (int32_t i = f.category_begin[c]; i < f.category_begin[c + 1]; ++i) {
        if (f.category_value[i] == value) {
          totals[k] += f.category_weight[i];
          break;
        }
      }
    }
  }
}

// The network's scores of `lanes` rows, added to `totals` (after the linear model's: forest.py's order).  Each row's
// units add their inputs in order and its score its units in order, those that are 0 skipped (forest.py's rule: a 0
// adds a signed 0, nothing once a unit is held at 0 or above), so the sums are forest.py's to the bit.
inline void add_network_lanes(const ForestData &f, const double *const *rows, size_t lanes, double *totals) {
  const size_t units = f.net_units;
  std::vector<double> unit(units);
  for (size_t k = 0; k < lanes; ++k) {
    const double *row = rows[k];
    std::copy(f.net_bias.begin(), f.net_bias.end(), unit.begin());
    size_t input = 0;
    auto add = [&](double x) {
      if (x != 0.0) {
        const double *w = f.net_weight.data() + input * units;
        for (size_t u = 0; u < units; ++u) unit[u] += w[u] * x;
      }
      ++input;
    };
    for (size_t i = 0; i < f.net_feature.size(); ++i) {
      const double raw = row[f.net_feature[i]];
      if (raw - raw != 0.0) {  // (NaN or infinite: 0)
        ++input;
        continue;
      }
      const double value = std::min(std::max(raw, f.net_low[i]), f.net_high[i]);  // (forest.py's order)
      add(f.net_log[i] ? std::copysign(log1p_of(f, std::fabs(value)), value) : value);
    }
    for (const int32_t feature : f.net_missing) {
      const double raw = row[feature];
      add(raw - raw != 0.0 ? 1.0 : 0.0);
    }
    for (size_t c = 0; c < f.net_category.size(); ++c) add(row[f.net_category[c]] == f.net_category_value[c] ? 1.0 : 0.0);
    double total = f.net_output_bias;
    for (size_t u = 0; u < units; ++u) {
      if (unit[u] > 0.0) total += f.net_output[u] * unit[u];
    }
    totals[k] += std::min(std::max(total, -f.net_bound), f.net_bound);
  }
}

int Forest_init(ForestObject *self, PyObject *args, PyObject *) {
  PyObject *spec;
  if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &spec)) return -1;
  PyObject *trees = PyDict_GetItemString(spec, "trees");
  if (trees == nullptr || !PyList_Check(trees)) {
    PyErr_SetString(PyExc_ValueError, "the forest needs a list \"trees\"");
    return -1;
  }
  std::unique_ptr<ForestData> f(new ForestData);
  for (Py_ssize_t t = 0; t < PyList_GET_SIZE(trees); ++t) {
    if (!read_tree(PyList_GET_ITEM(trees, t), *f)) return -1;
  }
  if (!read_linear(spec, *f)) return -1;
  if (!read_network(spec, *f)) return -1;
  if (!flatten(*f)) return -1;
  std::vector<Node>().swap(f->nodes);  // (predict walks the flat copy)
  delete self->forest;
  self->forest = f.release();
  return 0;
}

void Forest_dealloc(ForestObject *self) {
  delete self->forest;
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

constexpr double kZero = 1e-35;  // LightGBM's kZeroThreshold

// One step of a walk down a tree: the child of `node` that `row` goes to; nullptr where a
// categorical feature is infinite (predict's status 1).
inline const FlatNode *step(const FlatNode *nodes, const FlatNode *node, const double *row,
                            const int64_t *categories) {
  double value = row[node->feature];
  bool go_left;
  if (node->flags & kCategorical) {  // a NaN or negative value goes right
    if (value == value && value >= 0) {
      if (std::isinf(value)) return nullptr;
      if (value >= 9.2e18) {
        go_left = false;
      } else {
        const int64_t v = static_cast<int64_t>(value);
        go_left = std::binary_search(categories + node->cats.begin, categories + node->cats.end, v);
      }
    } else {
      go_left = false;
    }
  } else {
    if (value != value && node->missing != 2) value = 0.0;
    if ((node->missing == 1 && std::fabs(value) <= kZero) || (node->missing == 2 && value != value)) {
      go_left = node->flags & kDefaultLeft;
    } else {
      go_left = value <= node->split;
    }
  }
  return nodes + node->left + (go_left ? 0 : 1);
}

// The node after `at`: a plain numeric split reads its column of `columns` (ForestData::column_feature: a NaN
// there is -inf or +inf, whichever goes where `step` sends it) without a branch that depends on the data; the others
// (categorical, missing "zero") go by `step` on the `row` itself; a fault to `stopped` (and `faulted` set).
template <bool Slow>
inline int32_t next_node(const FlatNode *nodes, int32_t at, const double *columns, const double *row,
                         const int64_t *categories, int32_t stopped, bool &faulted) {
  const FlatNode &node = nodes[at];
  if (Slow && __builtin_expect(node.flags & kSlow, 0)) {
    const FlatNode *to = step(nodes, &node, row, categories);
    if (to == nullptr) {
      faulted = true;
      return stopped;
    }
    return static_cast<int32_t>(to - nodes);
  }
  return node.left + !(columns[node.feature] <= node.split);
}

// `kLanes` rows down one tree, `depth` steps (a leaf goes on to itself, so that `depth` steps take every row to
// its leaf), into `at`; row k's columns at `columns + k * count`, the row itself at `rows[k]`.  `Slow`: the tree
// has a node `step` decides (ForestData::slow).
template <bool Slow>
inline void walk_tree(const FlatNode *nodes, int32_t root, int32_t depth, const double *columns, size_t count,
                      const double *const *rows, const int64_t *categories, int32_t stopped, int32_t *at,
                      bool *faulted) {
  for (size_t k = 0; k < kLanes; ++k) at[k] = root;
  bool moving = true;
  for (int32_t d = 0; d < depth && moving; ++d) {  // (until every row is at its leaf)
    moving = false;
#pragma GCC unroll 8
    for (size_t k = 0; k < kLanes; ++k) {
      const int32_t next = next_node<Slow>(nodes, at[k], columns + k * count, rows[k], categories, stopped, faulted[k]);
      moving |= next != at[k];
      at[k] = next;
    }
  }
}

// 0: ok; 1: a categorical feature is infinite (int() overflows); 2: exp() overflows.  As in
// forest.py, which scores the rows one after the other, the first row with either fault decides.
// `logistic`: the rows' probabilities (forest.Forest.probabilities), else their sums (forest.Forest.score).
int predict(const ForestData &f, const double *rows, size_t n, size_t width, double *out, bool logistic = true) {
  const FlatNode *nodes = f.flat.data();
  const double *values = f.leaf_values.data();
  const int64_t *categories = f.categories.data();
  const int32_t stopped = f.stopped;
  const size_t numeric = f.column_feature.size();
  const size_t categorical = f.category_column_feature.size();
  const size_t count = numeric + categorical;
  const int32_t *feature = f.column_feature.data();
  const double *nan = f.column_nan.data();
  const int32_t *category_feature = f.category_column_feature.data();
  const uint64_t *category_mask = f.category_mask.data();
  std::vector<double> columns(kLanes * count);
  size_t first_infinite = n;  // the first row met with an infinite categorical value
  std::fill(out, out + n, 0.0);
  for (size_t r0 = 0; r0 < n; r0 += kLanes) {
    const size_t lanes = std::min(kLanes, n - r0);
    const double *row[kLanes];
    bool infinite = false;  // a row holds +inf in a categorical feature: the group walks flat_exact
    for (size_t k = 0; k < kLanes; ++k) {  // (a last group of fewer rows walks its first row again in the others)
      row[k] = rows + (r0 + (k < lanes ? k : 0)) * width;
      double *to = columns.data() + k * count;
      to[0] = 0.0;
      for (size_t c = 1; c < numeric; ++c) {
        const double value = row[k][feature[c]];
        to[c] = value == value ? value : nan[c];
      }
      for (size_t c = 0; c < categorical; ++c) {  // (where `step` sends the row: a NaN or negative value right)
        const double value = row[k][category_feature[c]];
        bool left = false;
        if (value >= 0) {
          if (value < 64.0) {
            left = (category_mask[c] >> static_cast<int>(value)) & 1;
          } else if (std::isinf(value)) {
            infinite = true;
          } else if (value < 9.2e18) {
            left = std::binary_search(categories + f.category_column_begin[c], categories + f.category_column_end[c],
                                      static_cast<int64_t>(value));
          }
        }
        to[numeric + c] = left ? 0.0 : 1.0;
      }
    }
    const FlatNode *walked = infinite ? f.flat_exact.data() : nodes;
    const uint8_t *slow = infinite ? f.slow_exact.data() : f.slow.data();
    bool faulted[kLanes] = {};
    for (size_t t = 0; t < f.flat_roots.size(); ++t) {
      int32_t at[kLanes];
      if (slow[t]) {
        walk_tree<true>(walked, f.flat_roots[t], f.depths[t], columns.data(), count, row, categories, stopped, at,
                        faulted);
      } else {
        walk_tree<false>(walked, f.flat_roots[t], f.depths[t], columns.data(), count, row, categories, stopped, at,
                         faulted);
      }
      for (size_t k = 0; k < lanes; ++k) out[r0 + k] += values[at[k]];
    }
    for (size_t k = 0; k < lanes; ++k) {
      if (faulted[k]) first_infinite = std::min(first_infinite, r0 + k);
    }
    if (f.has_linear) add_linear_lanes(f, row, lanes, out + r0);  // (here, while the group's rows are in the cache)
    if (f.has_network) add_network_lanes(f, row, lanes, out + r0);
  }
  if (!logistic) return first_infinite < n ? 1 : 0;
  for (size_t r = 0; r < n; ++r) {
    if (r == first_infinite) return 1;
    const double total = out[r];
    const double e = std::exp(-total);
    if (std::isinf(e) && std::isfinite(total)) return 2;
    out[r] = 1.0 / (1.0 + e);
  }
  return 0;
}

PyObject *Forest_probabilities(ForestObject *self, PyObject *args) {
  Py_buffer buffer;
  Py_ssize_t width;
  if (!PyArg_ParseTuple(args, "y*n", &buffer, &width)) return nullptr;
  struct Release {
    Py_buffer *b;
    ~Release() { PyBuffer_Release(b); }
  } release{&buffer};
  if (self->forest == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "forest not initialised");
    return nullptr;
  }
  if (width <= 0 || buffer.len % static_cast<Py_ssize_t>(width * sizeof(double)) != 0) {
    PyErr_SetString(PyExc_ValueError, "rows must hold n_features float64 values per row");
    return nullptr;
  }
  if (self->forest->max_feature >= width) {
    PyErr_Format(PyExc_ValueError, "the forest reads feature %d of rows of %zd", self->forest->max_feature, width);
    return nullptr;
  }
  const size_t n = static_cast<size_t>(buffer.len / (width * sizeof(double)));
  std::vector<double> rows;
  const double *data = static_cast<const double *>(buffer.buf);
  if (reinterpret_cast<uintptr_t>(buffer.buf) % alignof(double) != 0) {
    rows.resize(n * width);
    std::memcpy(rows.data(), buffer.buf, buffer.len);
    data = rows.data();
  }
  std::vector<double> out(n);
  int status;
  {
    GilRelease gil;
    status = predict(*self->forest, data, n, static_cast<size_t>(width), out.data());
  }
  if (status == 1) {
    PyErr_SetString(PyExc_OverflowError, "cannot convert float infinity to integer");
    return nullptr;
  }
  if (status == 2) {
    PyErr_SetString(PyExc_OverflowError, "math range error");
    return nullptr;
  }
  return list_of(n, [&](size_t i) { return PyFloat_FromDouble(out[i]); });
}

// second_look.neighbour_rows(rows, probabilities, words, threshold_row, only=looked): the rows of
// NEIGHBOUR_FEATURES of the looked blocks (CONTEXT, then SPREAD, then the block's FEATURES), bit-equal
// to numpy's (the same operations in the same order: prefix sums added one block at a time, as
// numpy's cumsum; a stable sort by probability, the highest first, as argsort(-p, kind="stable")).
constexpr int kContextCount = 15;
constexpr double kKept = 0.5, kFar = 20.0, kNoneKept = 99.0;

double around(const std::vector<double> &sums, const std::vector<double> &totals, const double *p,
              const double *w, size_t i, size_t n, size_t reach, bool itself) {
  const size_t low = i >= reach ? i - reach : 0, high = std::min(i + reach + 1, n);
  double num = sums[high] - sums[low], den = totals[high] - totals[low];
  if (!itself) {
    num = num - p[i] * w[i];
    den = den - w[i];
  }
  return den > 0.5 ? num / den : kNaN;
}

// The rows of NEIGHBOUR_FEATURES of the looked blocks (`looked[i]` not 0) into `out` (one row a looked block:
// CONTEXT, `spread`, the block's row of `rows`, n x width); `p`, `words`: each block's probability and words.
void neighbour_rows(const double *p, const double *words, size_t n, const double *spread, size_t spread_n,
                    const double *rows, size_t width, const unsigned char *looked, double *out) {
  std::vector<double> w(n), sums(n + 1, 0.0), totals(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) w[i] = words[i] + 1.0;
  for (size_t i = 0; i < n; ++i) {
    sums[i + 1] = i == 0 ? p[0] * w[0] : sums[i] + p[i] * w[i];
    totals[i + 1] = i == 0 ? w[0] : totals[i] + w[i];
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return -p[a] < -p[b]; });
  double all_words = 0.0;  // (whole numbers: any order of adding gives the same sum)
  for (size_t i = 0; i < n; ++i) all_words += w[order[i]] - 1.0;
  const double total = std::max(1.0, all_words);
  std::vector<double> rank(n);
  double running = 0.0;
  for (size_t k = 0; k < n; ++k) {
    const double words_k = w[order[k]] - 1.0;
    running = k == 0 ? words_k : running + words_k;
    rank[order[k]] = (running - words_k) / total;
  }
  double top = p[0];
  for (size_t i = 1; i < n; ++i) top = std::max(top, p[i]);
  std::vector<double> back(n), ahead(n);
  long last = -1;
  for (size_t i = 0; i < n; ++i) {
    back[i] = last >= 0 ? std::min(kFar, static_cast<double>(static_cast<long>(i) - last)) : kNoneKept;
    if (p[i] >= kKept) last = static_cast<long>(i);
  }
  long next = -1;
  for (size_t i = n; i-- > 0;) {
    ahead[i] = next >= 0 ? std::min(kFar, static_cast<double>(next - static_cast<long>(i))) : kNoneKept;
    if (p[i] >= kKept) next = static_cast<long>(i);
  }
  auto at = [&](long i) { return i >= 0 && i < static_cast<long>(n) ? p[static_cast<size_t>(i)] : kNaN; };
  double *row = out;
  for (size_t i = 0; i < n; ++i) {
    if (!looked[i]) continue;
    const long li = static_cast<long>(i);
    double max_before = kNaN, max_after = kNaN;
    for (long j = li - 5; j < li; ++j)
      if (j >= 0) max_before = max_before == max_before ? std::max(max_before, p[j]) : p[j];
    for (long j = li + 1; j <= li + 5; ++j)
      if (j < static_cast<long>(n)) max_after = max_after == max_after ? std::max(max_after, p[j]) : p[j];
    const double sandwich =
        max_before != max_before || max_after != max_after ? kNaN : std::min(max_before, max_after);
    const double context[kContextCount] = {p[i], at(li - 1), at(li - 2), at(li + 1), at(li + 2),
                                           around(sums, totals, p, w.data(), i, n, 2, false),
                                           around(sums, totals, p, w.data(), i, n, 5, false),
                                           around(sums, totals, p, w.data(), i, n, 10, true),
                                           max_before, max_after, sandwich, rank[i],
                                           top > 0 ? p[i] / top : 0.0, back[i], ahead[i]};
    std::memcpy(row, context, sizeof(context));
    row += kContextCount;
    std::memcpy(row, spread, spread_n * sizeof(double));
    row += spread_n;
    std::memcpy(row, rows + i * width, width * sizeof(double));
    row += width;
  }
}

PyObject *second_look_rows(PyObject *, PyObject *args) {
  Py_buffer rows_b, p_b, words_b, spread_b, looked_b;
  Py_ssize_t width;
  if (!PyArg_ParseTuple(args, "y*ny*y*y*y*", &rows_b, &width, &p_b, &words_b, &spread_b, &looked_b)) return nullptr;
  struct Release {
    Py_buffer *b[5];
    ~Release() {
      for (Py_buffer *x : b) PyBuffer_Release(x);
    }
  } release{{&rows_b, &p_b, &words_b, &spread_b, &looked_b}};
  const size_t n = static_cast<size_t>(p_b.len) / sizeof(double);
  if (width <= 0 || p_b.len % sizeof(double) != 0 || words_b.len != p_b.len || spread_b.len % sizeof(double) != 0 ||
      static_cast<size_t>(looked_b.len) != n ||
      static_cast<size_t>(rows_b.len) != n * static_cast<size_t>(width) * sizeof(double)) {
    PyErr_SetString(PyExc_ValueError, "second_look_rows: rows (n x width float64), probabilities and words (n "
                                      "float64), spread (float64) and looked (n bytes) do not agree");
    return nullptr;
  }
  // (copies: the buffers may not be aligned for double)
  std::vector<double> p(n), words(n), spread(static_cast<size_t>(spread_b.len) / sizeof(double));
  std::memcpy(p.data(), p_b.buf, p_b.len);
  std::memcpy(words.data(), words_b.buf, words_b.len);
  std::memcpy(spread.data(), spread_b.buf, spread_b.len);
  const unsigned char *looked = static_cast<const unsigned char *>(looked_b.buf);
  const double *rows = static_cast<const double *>(rows_b.buf);
  std::vector<double> aligned;
  if (reinterpret_cast<uintptr_t>(rows_b.buf) % alignof(double) != 0) {
    aligned.resize(static_cast<size_t>(rows_b.len) / sizeof(double));
    std::memcpy(aligned.data(), rows_b.buf, rows_b.len);
    rows = aligned.data();
  }
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += looked[i] != 0;
  const size_t out_width = kContextCount + spread.size() + static_cast<size_t>(width);
  PyObject *result = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(count * out_width * sizeof(double)));
  if (result == nullptr || n == 0) return result;
  double *out = reinterpret_cast<double *>(PyBytes_AS_STRING(result));
  {
    GilRelease gil;
    neighbour_rows(p.data(), words.data(), n, spread.data(), spread.size(),
                   rows, static_cast<size_t>(width), looked, out);
  }
  return result;
}

// learned/__init__.py's `kept` (its reference, with `reading.Forest.decision`, `page_threshold.threshold_row`,
// `second_look.SecondLook.added` and `choose_from_rows`), for a reader's forests: the blocks kept, from the
// page's rows, in one call.  Each step gives what the reference gives, to the bit: the same operations in the
// same order, Python's sum() of floats as the running Python's (a plain sum; from 3.12 Neumaier's), its sort
// (stable, the most probable first) and its max().  `kept` answers None where the reference must decide (a
// probability that is NaN, a word count that is not a number a double holds exactly, section ends that do not fit
// the page): it raises there, or sorts as only it knows.
struct ChooserObject {
  PyObject_HEAD
  PyObject *forests[3];  // the block forest, the page threshold's, the second look's (the last two may be None)
  // the policy (learned/__init__.py's, page_threshold.py's and second_look.py's constants, and the reader's own)
  std::vector<int32_t> *evidence, *prose_marks;
  std::vector<double> *word_shares, *levels, *heading_tags, *heading_ranks;
  int32_t words, tag, top_group, footer, dialog, link_share, repeats, sentence, max_column;
  double threshold, lowest, highest, look_from, add_at, linked, min_words;
};

PyTypeObject ChooserType = {PyVarObject_HEAD_INIT(nullptr, 0)};

const ForestData *forest_of(PyObject *forest) {
  return forest == Py_None ? nullptr : reinterpret_cast<ForestObject *>(forest)->forest;
}

bool policy_number(PyObject *policy, const char *key, double &out) {
  PyObject *value = PyDict_GetItemString(policy, key);
  if (value == nullptr) {
    PyErr_Format(PyExc_KeyError, "the reader's policy has no \"%s\"", key);
    return false;
  }
  out = PyFloat_AsDouble(value);
  return !(out == -1.0 && PyErr_Occurred());
}

bool policy_column(PyObject *policy, const char *key, int32_t &out, int32_t &max_column) {
  double value;
  if (!policy_number(policy, key, value)) return false;
  if (!(value >= 0 && value < kFeatureCount && value == std::floor(value))) {
    PyErr_Format(PyExc_ValueError, "the reader's policy: \"%s\" is not a feature's column", key);
    return false;
  }
  out = static_cast<int32_t>(value);
  max_column = std::max(max_column, out);
  return true;
}

bool policy_numbers(PyObject *policy, const char *key, std::vector<double> &out) {
  PyObject *value = PyDict_GetItemString(policy, key);
  PyObject *seq = value == nullptr ? nullptr : PySequence_Fast(value, "the reader's policy: a list of numbers");
  if (seq == nullptr) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_KeyError, "the reader's policy has no \"%s\"", key);
    return false;
  }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    const double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    if (x == -1.0 && PyErr_Occurred()) {
      Py_DECREF(seq);
      return false;
    }
    out.push_back(x);
  }
  Py_DECREF(seq);
  return true;
}

bool policy_columns(PyObject *policy, const char *key, std::vector<int32_t> &out, int32_t &max_column) {
  std::vector<double> values;
  if (!policy_numbers(policy, key, values)) return false;
  for (const double value : values) {
    if (!(value >= 0 && value < kFeatureCount && value == std::floor(value))) {
      PyErr_Format(PyExc_ValueError, "the reader's policy: \"%s\" holds what is not a feature's column", key);
      return false;
    }
    out.push_back(static_cast<int32_t>(value));
    max_column = std::max(max_column, out.back());
  }
  return true;
}

void Chooser_clear(ChooserObject *self) {
  for (PyObject *&forest : self->forests) Py_CLEAR(forest);
  delete self->evidence;
  delete self->prose_marks;
  delete self->word_shares;
  delete self->levels;
  delete self->heading_tags;
  delete self->heading_ranks;
  self->evidence = self->prose_marks = nullptr;
  self->word_shares = self->levels = self->heading_tags = self->heading_ranks = nullptr;
}

int Chooser_init(ChooserObject *self, PyObject *args, PyObject *) {
  PyObject *block, *page, *second, *policy;
  if (!PyArg_ParseTuple(args, "O!OOO!", &ForestType, &block, &page, &second, &PyDict_Type, &policy)) return -1;
  for (PyObject *forest : {page, second}) {
    if (forest != Py_None && !PyObject_TypeCheck(forest, &ForestType)) {
      PyErr_SetString(PyExc_TypeError, "LearnedChooser: the page threshold's and the second look's forests are "
                                       "Forest objects or None");
      return -1;
    }
  }
  Chooser_clear(self);
  PyObject *forests[3] = {block, page, second};
  for (int k = 0; k < 3; ++k) {
    Py_INCREF(forests[k]);
    self->forests[k] = forests[k];
    if (forest_of(forests[k]) == nullptr && forests[k] != Py_None) {
      PyErr_SetString(PyExc_RuntimeError, "forest not initialised");
      return -1;
    }
  }
  self->evidence = new std::vector<int32_t>();
  self->prose_marks = new std::vector<int32_t>();
  self->word_shares = new std::vector<double>();
  self->levels = new std::vector<double>();
  self->heading_tags = new std::vector<double>();
  self->heading_ranks = new std::vector<double>();
  int32_t &top = self->max_column = 0;
  if (!policy_column(policy, "words", self->words, top) || !policy_column(policy, "tag", self->tag, top) ||
      !policy_column(policy, "top_group", self->top_group, top) || !policy_column(policy, "footer", self->footer, top) ||
      !policy_column(policy, "dialog", self->dialog, top) ||
      !policy_column(policy, "link_share", self->link_share, top) ||
      !policy_column(policy, "repeats", self->repeats, top) || !policy_column(policy, "sentence", self->sentence, top) ||
      !policy_columns(policy, "evidence", *self->evidence, top) ||
      !policy_columns(policy, "prose_marks", *self->prose_marks, top) ||
      !policy_numbers(policy, "word_shares", *self->word_shares) || !policy_numbers(policy, "levels", *self->levels) ||
      !policy_numbers(policy, "heading_tags", *self->heading_tags) ||
      !policy_numbers(policy, "heading_ranks", *self->heading_ranks) ||
      !policy_number(policy, "threshold", self->threshold) || !policy_number(policy, "lowest", self->lowest) ||
      !policy_number(policy, "highest", self->highest) || !policy_number(policy, "look_from", self->look_from) ||
      !policy_number(policy, "add_at", self->add_at) || !policy_number(policy, "linked", self->linked) ||
      !policy_number(policy, "min_words", self->min_words)) {
    return -1;
  }
  if (self->heading_tags->size() != self->heading_ranks->size()) {
    PyErr_SetString(PyExc_ValueError, "the reader's policy: one rank a heading tag");
    return -1;
  }
  const ForestData *page_forest = forest_of(page);
  const size_t threshold_width = self->evidence->size() + 3 + self->word_shares->size() + self->levels->size();
  if (page_forest != nullptr && static_cast<size_t>(std::max(page_forest->max_feature, 0)) >= threshold_width) {
    PyErr_Format(PyExc_ValueError, "the page threshold's forest reads feature %d of rows of %zu",
                 page_forest->max_feature, threshold_width);
    return -1;
  }
  return 0;
}

void Chooser_dealloc(ChooserObject *self) {
  Chooser_clear(self);
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

// sum(values) of Python floats as this Python sums them (builtin_sum: 0 + the first, then each in turn; from 3.12
// with Neumaier's compensation, added at the end where it is finite and not 0).
template <typename F>
double python_sum(size_t n, F value) {
  double total = 0.0 + value(0);
#if PY_VERSION_HEX >= 0x030C0000
  double c = 0.0;
  for (size_t i = 1; i < n; ++i) {
    const double x = value(i);
    const double t = total + x;
    if (std::fabs(total) >= std::fabs(x)) {
      c += (total - t) + x;
    } else {
      c += (x - t) + total;
    }
    total = t;
  }
  if (c != 0.0 && std::isfinite(c)) total += c;
#else
  for (size_t i = 1; i < n; ++i) total += value(i);
#endif
  return total;
}

// max(values) > bound, as Python's max() finds the largest (the first value, then any greater than the largest so far).
template <typename F>
bool python_max_above(size_t n, F value, double bound) {
  double top = value(0);
  for (size_t i = 1; i < n; ++i) {
    const double x = value(i);
    if (x > top) top = x;
  }
  return top > bound;
}

// Python's round() of a float, to the nearest whole number and a half to the even one.
double python_round(double x) {
  double rounded = std::round(x);
  if (std::fabs(x - rounded) == 0.5) rounded = 2.0 * std::round(x / 2.0);
  return rounded;
}

enum class Chosen { kept, reference, overflow_int, overflow_exp };

// The decision and the choice (see ChooserObject); `keep` gets one flag a block.
// Each block's words (round(expm1()) of its `words` column), or false where the reference must decide: a count
// that is not a number a double holds exactly (NaN, infinite: round() raises), or words past 2**53 in all (Python's
// ints would add them exactly).
bool block_words(const ChooserObject &c, const double *rows, size_t n, size_t width, std::vector<double> &words) {
  constexpr double kExact = 9007199254740992.0;  // 2**53
  words.resize(n);
  double all_words = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double x = std::expm1(rows[i * width + c.words]);
    if (!(std::fabs(x) < kExact)) return false;
    words[i] = python_round(x);
    all_words += std::fabs(words[i]);
  }
  return all_words < kExact;
}

// page_threshold.threshold_row into `row`: the page's evidence (from its first row), then its SPREAD; `p` holds no
// NaN (sorted() of NaN keys is the reference's).
void threshold_row(const ChooserObject &c, const double *rows, size_t n, const double *p, const double *words,
                   std::vector<double> &row) {
  const std::vector<double> &shares = *c.word_shares, &levels = *c.levels;
  row.clear();
  for (const int32_t col : *c.evidence) row.push_back(rows[col]);
  double sum_words = 0.0;
  for (size_t i = 0; i < n; ++i) sum_words += words[i];
  const double total = std::max(1.0, sum_words);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<double> at_share, at_level(levels.size(), 0.0);
  long level = static_cast<long>(levels.size()) - 1;
  double running = 0.0;
  for (const size_t i : order) {
    const double q = p[i];
    while (level >= 0 && q < levels[level]) {
      at_level[level] = running / total;
      --level;
    }
    running += words[i];
    while (at_share.size() < shares.size() && running / total >= shares[at_share.size()]) at_share.push_back(q);
  }
  while (level >= 0) {
    at_level[level] = running / total;
    --level;
  }
  while (at_share.size() < shares.size()) at_share.push_back(p[order[n - 1]]);
  row.push_back(p[order[0]]);
  row.push_back(python_sum(n, [&](size_t i) { return p[i]; }) / static_cast<double>(n));
  row.push_back(python_sum(n, [&](size_t i) { return p[i] * words[i]; }) / total);
  row.insert(row.end(), at_share.begin(), at_share.end());
  row.insert(row.end(), at_level.begin(), at_level.end());
}

bool any_nan(const std::vector<double> &values) {
  for (const double v : values)
    if (v != v) return true;
  return false;
}

Chosen choose_blocks(const ChooserObject &c, const double *rows, size_t n, size_t width, const std::vector<long> &ends,
                     std::vector<uint8_t> &keep) {
  auto column = [&](int32_t col) { return [rows, width, col](size_t i) { return rows[i * width + col]; }; };
  std::vector<double> p(n);
  const int status = predict(*forest_of(c.forests[0]), rows, n, width, p.data());
  if (status != 0) return status == 1 ? Chosen::overflow_int : Chosen::overflow_exp;
  std::vector<double> words;
  if (any_nan(p) || !block_words(c, rows, n, width, words)) return Chosen::reference;
  // reading.Forest.decision
  const ForestData *page_forest = forest_of(c.forests[1]), *second_forest = forest_of(c.forests[2]);
  double threshold = c.threshold;
  std::vector<uint8_t> added;
  if (page_forest != nullptr || second_forest != nullptr) {
    std::vector<double> row;
    threshold_row(c, rows, n, p.data(), words.data(), row);
    const size_t evidence = c.evidence->size();
    if (page_forest != nullptr) {  // PageThreshold.at
      double score;
      if (predict(*page_forest, row.data(), 1, row.size(), &score, false) != 0) return Chosen::overflow_int;
      const double low = score > c.lowest ? score : c.lowest;
      threshold = low < c.highest ? low : c.highest;
    }
    if (second_forest != nullptr) {  // SecondLook.added
      added.assign(n, 0);
      std::vector<uint8_t> looked(n);
      size_t count = 0;
      for (size_t i = 0; i < n; ++i) count += looked[i] = threshold > p[i] && p[i] >= c.look_from;
      if (count > 0) {
        const size_t spread = row.size() - evidence, out_width = kContextCount + spread + width;
        if (static_cast<size_t>(second_forest->max_feature) >= out_width) return Chosen::reference;
        std::vector<double> wide(count * out_width), second(count);
        neighbour_rows(p.data(), words.data(), n, row.data() + evidence, spread, rows, width, looked.data(),
                       wide.data());
        const int faulted = predict(*second_forest, wide.data(), count, out_width, second.data());
        if (faulted != 0) return faulted == 1 ? Chosen::overflow_int : Chosen::overflow_exp;
        for (size_t i = 0, k = 0; i < n; ++i) {
          if (looked[i]) added[i] = (second[k++] + p[i]) / 2 >= c.add_at;
        }
      }
    }
  }
  // choose_from_rows
  const std::vector<double> &tags = *c.heading_tags, &ranks = *c.heading_ranks;
  auto rank_of = [&](double tag) {
    for (size_t k = 0; k < tags.size(); ++k)
      if (tags[k] == tag) return ranks[k];
    return 0.0;
  };
  keep.assign(n, 0);
  // all_prose
  bool prose = true;
  for (const int32_t col : *c.prose_marks) {
    if (python_max_above(n, column(col), 0.0)) {
      prose = false;
      break;
    }
  }
  if (prose && python_max_above(n, column(c.repeats), 1.0)) prose = false;
  if (prose) {
    bool all_headings = true, all_sentences = true;
    for (size_t i = 0; i < n; ++i) {
      const bool heading = rank_of(rows[i * width + c.tag]) != 0.0;
      all_headings &= heading;
      all_sentences &= heading || rows[i * width + c.sentence] > 0;
    }
    prose = !all_headings && all_sentences;
  }
  if (prose) {
    keep.assign(n, 1);
    return Chosen::kept;
  }
  auto enough = [&](const std::vector<uint8_t> &flags) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
      if (flags[i]) sum += words[i];
    return sum >= c.min_words;
  };
  for (size_t i = 0; i < n; ++i) keep[i] = p[i] >= threshold || (!added.empty() && added[i]);
  std::vector<uint8_t> within(n);  // set_apart
  for (size_t i = 0; i < n; ++i)
    within[i] = keep[i] && !(rows[i * width + c.footer] > 0 || rows[i * width + c.dialog] > 0);
  if (enough(within)) keep.swap(within);
  if (!ends.empty()) {  // headings_follow_sections
    std::vector<double> level(n);
    for (size_t i = 0; i < n; ++i) level[i] = rank_of(rows[i * width + c.tag]);
    std::vector<uint8_t> headed(keep);
    for (size_t i = 0; i < n; ++i) {
      if (level[i] == 0.0) continue;
      bool body = false, agrees = false;
      for (long j = static_cast<long>(i) + 1; j <= ends[i]; ++j) {
        if (level[j] != 0.0) {
          if (level[j] <= level[i]) break;
          continue;
        }
        body = true;
        if (keep[j] == keep[i]) {
          agrees = true;
          break;
        }
      }
      if (body && !agrees) headed[i] = !keep[i];
    }
    if (enough(headed)) keep.swap(headed);
  }
  {  // without_trailers
    std::vector<uint8_t> ended(keep);
    bool dropped = false;
    for (size_t at = n; at-- > 0;) {
      if (!keep[at]) continue;
      const double share = rows[at * width + c.link_share];
      if (!(rank_of(rows[at * width + c.tag]) != 0.0 || share >= c.linked)) break;
      ended[at] = 0;
      dropped = true;
    }
    if (dropped && enough(ended)) keep.swap(ended);
  }
  if (!enough(keep)) {
    for (size_t i = 0; i < n; ++i) keep[i] = keep[i] || rows[i * width + c.top_group] > 0;
  }
  return Chosen::kept;
}

PyObject *Chooser_kept(ChooserObject *self, PyObject *args) {
  Py_buffer buffer;
  Py_ssize_t width;
  PyObject *ends_list;
  if (!PyArg_ParseTuple(args, "y*nO!", &buffer, &width, &PyList_Type, &ends_list)) return nullptr;
  struct Release {
    Py_buffer *b;
    ~Release() { PyBuffer_Release(b); }
  } release{&buffer};
  if (self->evidence == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "LearnedChooser not initialised");
    return nullptr;
  }
  if (width <= self->max_column || buffer.len % static_cast<Py_ssize_t>(width * sizeof(double)) != 0 ||
      forest_of(self->forests[0])->max_feature >= width) {
    PyErr_SetString(PyExc_ValueError, "rows must hold n_features float64 values per row, every column the reader reads");
    return nullptr;
  }
  const size_t n = static_cast<size_t>(buffer.len / (width * sizeof(double)));
  const Py_ssize_t given = PyList_GET_SIZE(ends_list);
  if (n == 0 || (given != 0 && static_cast<size_t>(given) != n)) Py_RETURN_NONE;
  std::vector<long> ends(static_cast<size_t>(given));
  for (Py_ssize_t i = 0; i < given; ++i) {
    ends[i] = PyLong_AsLong(PyList_GET_ITEM(ends_list, i));
    if (ends[i] == -1 && PyErr_Occurred()) return nullptr;
    if (ends[i] >= static_cast<long>(n)) Py_RETURN_NONE;  // (the reference reads past the page: it raises)
  }
  std::vector<double> aligned;
  const double *rows = static_cast<const double *>(buffer.buf);
  if (reinterpret_cast<uintptr_t>(buffer.buf) % alignof(double) != 0) {
    aligned.resize(n * static_cast<size_t>(width));
    std::memcpy(aligned.data(), buffer.buf, buffer.len);
    rows = aligned.data();
  }
  std::vector<uint8_t> keep;
  Chosen chosen;
  {
    GilRelease gil;
    chosen = choose_blocks(*self, rows, n, static_cast<size_t>(width), ends, keep);
  }
  switch (chosen) {
    case Chosen::reference:
      Py_RETURN_NONE;
    case Chosen::overflow_int:
      PyErr_SetString(PyExc_OverflowError, "cannot convert float infinity to integer");
      return nullptr;
    case Chosen::overflow_exp:
      PyErr_SetString(PyExc_OverflowError, "math range error");
      return nullptr;
    case Chosen::kept:
      break;
  }
  return list_of(n, [&](size_t i) { return PyBool_FromLong(keep[i]); });
}

// kept's page_threshold.threshold_row of the page of `rows` with the blocks' `probabilities` (float64), for the tests;
// None where the reference must decide.
PyObject *Chooser_threshold_row(ChooserObject *self, PyObject *args) {
  Py_buffer buffer, p_b;
  Py_ssize_t width;
  if (!PyArg_ParseTuple(args, "y*ny*", &buffer, &width, &p_b)) return nullptr;
  struct Release {
    Py_buffer *b[2];
    ~Release() {
      for (Py_buffer *x : b) PyBuffer_Release(x);
    }
  } release{{&buffer, &p_b}};
  if (self->evidence == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "LearnedChooser not initialised");
    return nullptr;
  }
  const size_t n = p_b.len / sizeof(double);
  if (width <= self->max_column || p_b.len % sizeof(double) != 0 ||
      static_cast<size_t>(buffer.len) != n * static_cast<size_t>(width) * sizeof(double)) {
    PyErr_SetString(PyExc_ValueError, "threshold_row: rows (n x width float64, every column the reader reads) and "
                                      "probabilities (n float64) do not agree");
    return nullptr;
  }
  if (n == 0) Py_RETURN_NONE;
  std::vector<double> rows(n * static_cast<size_t>(width)), p(n), words, row;
  std::memcpy(rows.data(), buffer.buf, buffer.len);
  std::memcpy(p.data(), p_b.buf, p_b.len);
  if (any_nan(p) || !block_words(*self, rows.data(), n, static_cast<size_t>(width), words)) Py_RETURN_NONE;
  threshold_row(*self, rows.data(), n, p.data(), words.data(), row);
  return list_of(row.size(), [&](size_t i) { return PyFloat_FromDouble(row[i]); });
}

PyMethodDef Chooser_methods[] = {
    {"threshold_row", reinterpret_cast<PyCFunction>(Chooser_threshold_row), METH_VARARGS,
     "threshold_row(rows, n_features, probabilities) -> [float] or None: page_threshold.threshold_row as kept "
     "computes it (for the tests)"},
    {"kept", reinterpret_cast<PyCFunction>(Chooser_kept), METH_VARARGS,
     "kept(rows, n_features, section_ends) -> [bool] or None: learned.kept's blocks (None: the reference decides)"},
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef Forest_methods[] = {
    {"probabilities", reinterpret_cast<PyCFunction>(Forest_probabilities), METH_VARARGS,
     "probabilities(rows, n_features) -> [float]: rows a buffer of float64, n_features per row"},
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef learned_methods[] = {
    {"segment_html", segment_html, METH_O, "segment_html(html) -> Page: learned.segment.segment"},
    {"unescape_html", unescape_html, METH_O, "unescape_html(text) -> str: html.unescape (learned.segment.unescape)"},
    {"second_look_rows", second_look_rows, METH_VARARGS,
     "second_look_rows(rows, width, probabilities, words, spread, looked) -> bytes: "
     "learned.second_look.neighbour_rows of the looked blocks (float64 buffers; looked one byte a block)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// Adds the learned reader's functions and types to the module (called from PyInit__native).
bool add_learned_reader(PyObject *module) {
  PageType.tp_name = "plexity_plugins.runtime._native.LearnedPage";
  PageType.tp_basicsize = sizeof(PageObject);
  PageType.tp_flags = Py_TPFLAGS_DEFAULT;
  PageType.tp_dealloc = reinterpret_cast<destructor>(Page_dealloc);
  PageType.tp_methods = Page_methods;
  PageType.tp_getset = Page_getset;
  PageType.tp_as_sequence = &Page_sequence;
  PageType.tp_doc = "A page's blocks and elements (segment_html's result)";
  ForestType.tp_name = "plexity_plugins.runtime._native.Forest";
  ForestType.tp_basicsize = sizeof(ForestObject);
  ForestType.tp_flags = Py_TPFLAGS_DEFAULT;
  ForestType.tp_new = PyType_GenericNew;
  ForestType.tp_init = reinterpret_cast<initproc>(Forest_init);
  ForestType.tp_dealloc = reinterpret_cast<destructor>(Forest_dealloc);
  ForestType.tp_methods = Forest_methods;
  ForestType.tp_doc = "Forest(spec): the learned reader's forest (learned/forest.py's JSON form, parsed)";
  ChooserType.tp_name = "plexity_plugins.runtime._native.LearnedChooser";
  ChooserType.tp_basicsize = sizeof(ChooserObject);
  ChooserType.tp_flags = Py_TPFLAGS_DEFAULT;
  ChooserType.tp_new = PyType_GenericNew;
  ChooserType.tp_init = reinterpret_cast<initproc>(Chooser_init);
  ChooserType.tp_dealloc = reinterpret_cast<destructor>(Chooser_dealloc);
  ChooserType.tp_methods = Chooser_methods;
  ChooserType.tp_doc = "LearnedChooser(forest, page_forest, second_forest, policy): learned.kept for a reader's forests";
  if (PyType_Ready(&PageType) < 0 || PyType_Ready(&ForestType) < 0 || PyType_Ready(&ChooserType) < 0) return false;
  Py_INCREF(&PageType);
  if (PyModule_AddObject(module, "LearnedPage", reinterpret_cast<PyObject *>(&PageType)) < 0) {
    Py_DECREF(&PageType);
    return false;
  }
  Py_INCREF(&ForestType);
  if (PyModule_AddObject(module, "Forest", reinterpret_cast<PyObject *>(&ForestType)) < 0) {
    Py_DECREF(&ForestType);
    return false;
  }
  Py_INCREF(&ChooserType);
  if (PyModule_AddObject(module, "LearnedChooser", reinterpret_cast<PyObject *>(&ChooserType)) < 0) {
    Py_DECREF(&ChooserType);
    return false;
  }
  if (PyModule_AddIntConstant(module, "LEARNED_FEATURE_COUNT", kFeatureCount) < 0) return false;
  if (PyModule_AddIntConstant(module, "LEARNED_MAX_INLINE_DEPTH", kMaxInlineDepth) < 0) return false;
  return PyModule_AddFunctions(module, learned_methods) == 0;
}
