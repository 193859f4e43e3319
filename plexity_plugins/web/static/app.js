// plexity web demo. The server scores each sentence once (POST /api/score); the page keeps
// the scores and recomputes kept/dropped, the cleaned text and the histogram as the
// threshold moves, without asking the server again.
// All user text goes into the DOM through textContent or text nodes (no HTML parsing of user text).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const BIN = 0.1; // histogram bin width in log10(perplexity), as in plexity-stats.json
  const W = 900, H = 240, M = { left: 52, right: 18, top: 24, bottom: 36 };

  let models = {};        // name -> {threshold, ...} from /api/models
  let state = null;       // the last scored document, see showResult
  let lastModel = null;
  let userMoved = false;  // keep a threshold the user chose when re-scoring with the same model

  // Why the server's cleaned text is empty (the answer's `empty`, as `plexity clean` counts it), for the
  // reasons no threshold changes; all_sentences_dropped is not shown: moving the threshold changes it.
  const EMPTY_NOTES = {
    empty_input: "Nothing to score: the input is empty.",
    no_text_extracted: "The extractor found no text in this HTML (no_text_extracted): try another extractor.",
    no_sentences: "No sentence to score in this text (no_sentences).",
  };

  // -- helpers -----------------------------------------------------------------------

  function el(tag, attrs = {}, parent = null, ns = null) {
    const node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function svg(tag, attrs, parent) {
    return el(tag, attrs, parent, SVG_NS);
  }

  function clamp(x, lo, hi) {
    return Math.min(hi, Math.max(lo, x));
  }

  function fmt(x) {
    if (x >= 100) return Math.round(x).toLocaleString("en");
    return Number(x.toPrecision(3)).toString();
  }

  function fmtDecade(x) {
    const units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (const [size, suffix] of units) if (x >= size) return String(Math.round(x / size)) + suffix;
    return String(Math.round(x));
  }

  // A fixed colour scale, so a colour always means the same perplexity:
  // green at 10^1.5 and below, through yellow, to red at 10^4.5 and above.
  function colour(ppl) {
    if (ppl === null) return "hsl(210, 15%, 90%)";
    const t = clamp((Math.log10(Math.max(ppl, 1)) - 1.5) / 3, 0, 1);
    return `hsl(${Math.round(130 * (1 - t))}, 70%, 80%)`;
  }

  function log10(ppl) {
    return Math.log10(Math.max(ppl, 1));
  }

  function setStatus(message, isError = false) {
    const status = $("status");
    status.textContent = message;
    status.classList.toggle("error", isError);
  }

  // -- which sentences to keep: the methods of plexity_plugins/scoring/methods.py ----------------
  // The server sends each sentence's perplexity (unrounded), token count and block (line)
  // number, so the page reaches the same verdicts as PerplexityScorer.clean at any threshold.
  // Keep in step with scoring/methods.py: the parity test
  // tests/test_web_browser.py::test_parity_javascript_decision_port_matches_python compares them.

  function blockStats(sentences) {
    // per block: pooled perplexity (token-weighted, like one long sentence) and tokens
    const logprob = [], count = [];
    for (const s of sentences) {
      const n = s.tokens + 1; // the sentence-end token counts
      logprob[s.block] = (logprob[s.block] || 0) - n * Math.log10(s.perplexity);
      count[s.block] = (count[s.block] || 0) + n;
    }
    return { ppl: logprob.map((lp, b) => 10 ** (-lp / count[b])), count };
  }

  function maxRegion(weights) {
    // (first, last) block of the maximum-sum run (Kadane), or null if no run is positive
    let best = 0, bestSpan = null, running = 0, start = 0;
    weights.forEach((w, i) => {
      if (running <= 0) { running = w; start = i; } else { running += w; }
      if (running > best) { best = running; bestSpan = [start, i]; }
    });
    return bestSpan;
  }

  function runs(weights, fraction) {
    // methods.kept_runs: the page's maximal scoring runs (methods.maximal_runs, Ruzzo-Tompa, one
    // pass) whose sum is at least `fraction` of the best one's
    const first = [], last = [], low = [], high = [], left = [];
    let cumulative = 0;
    weights.forEach((w, i) => {
      if (w > 0) {
        let start = i, runLow = cumulative;
        const runHigh = cumulative + w;
        for (;;) {
          let j = low.length - 1;
          while (j >= 0 && low[j] >= runLow) j = left[j];
          if (j >= 0 && high[j] < runHigh) {  // merge runs j..this one into one run
            start = first[j]; runLow = low[j];
            for (const list of [first, last, low, high, left]) list.length = j;
            continue;
          }
          first.push(start); last.push(i); low.push(runLow); high.push(runHigh); left.push(j);
          break;
        }
      }
      cumulative += w;
    });
    if (!first.length) return [];
    const totals = high.map((h, k) => h - low[k]);
    const best = totals.reduce((a, b) => (b > a ? b : a), -Infinity);
    return first.map((f, k) => [f, last[k], totals[k]]).filter(r => r[2] >= fraction * best).map(r => [r[0], r[1]]);
  }

  function regionsLimit(ppl, count, threshold) {
    // methods.regions_limit: the threshold, or the perplexity of the page's median token if higher
    // (only on a page with a block at or below the threshold)
    if (!ppl.some((p) => p <= threshold)) return threshold;
    const order = ppl.map((p, b) => b).sort((a, b) => ppl[a] - ppl[b] || a - b);
    const half = count.reduce((x, y) => x + y, 0) / 2;
    let seen = 0;
    for (const b of order) {
      seen += count[b];
      if (seen >= half) return Math.max(threshold, ppl[b]);
    }
    return threshold;
  }

  function decideKeep(data, threshold) {
    const sentences = data.sentences;
    if (data.passthrough || sentences.some((s) => s.perplexity === null)) return sentences.map(() => true);
    if (data.method === "sentences") return sentences.map((s) => s.perplexity <= threshold);
    const { ppl, count } = blockStats(sentences);
    let first, last;
    if (data.method === "regions") {
      const limit = regionsLimit(ppl, count, threshold), logT = Math.log10(limit);
      const cap = data.method_params.negative_token_cap, short = data.method_params.short_block_tokens;
      const weights = ppl.map((p, b) => {
        const margin = logT - Math.log10(p);
        return margin > 0 ? count[b] * margin : Math.min(count[b], cap) * margin;
      });
      const keptBlock = ppl.map(() => false);
      for (const [a, z] of runs(weights, data.method_params.regions_fraction)) {
        for (let b = a; b <= z; b++) keptBlock[b] = !(ppl[b] > limit && count[b] < short);
      }
      return sentences.map((s) => keptBlock[s.block]);
    }
    if (data.method === "region") {
      const logT = Math.log10(threshold), cap = data.method_params.negative_token_cap;
      const weights = ppl.map((p, b) => {
        const margin = logT - Math.log10(p);
        return margin > 0 ? count[b] * margin : Math.min(count[b], cap) * margin;
      });
      const span = maxRegion(weights);
      if (span === null) return sentences.map(() => false);
      [first, last] = span;
      // inside the region, short lines above the threshold (a stray menu item) still go
      const short = data.method_params.short_block_tokens;
      const keptBlock = ppl.map((p, b) => first <= b && b <= last && !(p > threshold && count[b] < short));
      return sentences.map((s) => keptBlock[s.block]);
    } else { // "trim": drop leading and trailing runs of short blocks above the threshold
      // and above trim_relative times the page's lower median block perplexity (methods.trim_limit)
      const sorted = [...ppl].sort((a, b) => a - b);
      const median = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : 0;
      const limit = Math.max(threshold, data.method_params.trim_relative * median);
      const junk = ppl.map((p, b) => p > limit && count[b] < data.method_params.trim_max_tokens);
      first = 0;
      while (first < junk.length && junk[first]) first++;
      last = junk.length - 1;
      while (last >= first && junk[last]) last--;
    }
    return sentences.map((s) => first <= s.block && s.block <= last);
  }

  // -- cleaned text: the same rule as plexity_plugins.scoring.scorer._join_kept ---------------
  // Kept sentences verbatim; between two of them the original whitespace (or nothing) if they were
  // neighbours, else the strongest break (paragraph, line, space) in between.
  // Sentences never span a newline, so the breaks between two kept sentences are those
  // of the gaps between them: each gap's kind is worked out once, when the text arrives.
  function joinKept(keep) {
    const { sentences, gaps, gapKinds } = state;
    const out = [];
    let prev = -1, kind = 0; // kind: the strongest break since the last kept sentence
    sentences.forEach((s, i) => {
      kind = Math.max(kind, gapKinds[i]);
      if (!keep[i]) return;
      if (prev >= 0) {
        if (prev === i - 1 && /^\s*$/.test(gaps[i])) out.push(gaps[i]);
        else out.push(kind === 2 ? "\n\n" : kind === 1 ? "\n" : " ");
      }
      out.push(s.text);
      prev = i;
      kind = 0;
    });
    return out.join("");
  }

  // -- rendering -----------------------------------------------------------------------

  function buildSentenceView() {
    const view = $("sentences");
    view.replaceChildren();
    const { chars, sentences } = state;
    const blocks = state.method === "sentences" || state.passthrough ? null : blockStats(sentences).ppl;
    // gap i: the text before sentence i. Offsets are Python string indices (code points):
    // slice code points, not UTF-16 units.
    state.gaps = sentences.map((s, i) => chars.slice(i ? sentences[i - 1].end : 0, s.start).join(""));
    state.gapKinds = state.gaps.map((gap) => (/\n[^\S\n]*\n/.test(gap) ? 2 : gap.includes("\n") ? 1 : 0));
    state.scores = sentences.map((s) => {
      if (s.perplexity === null) return "not scored";
      return `perplexity ${fmt(s.perplexity)}` + (blocks ? ` (its line: ${fmt(blocks[s.block])})` : "");
    });
    state.spans = sentences.map((s, i) => {
      if (state.gaps[i]) view.appendChild(document.createTextNode(state.gaps[i]));
      const span = el("span", { class: "sentence" }, view);
      span.textContent = s.text;
      span.style.backgroundColor = colour(s.perplexity);
      return span;
    });
    const end = sentences.length ? sentences[sentences.length - 1].end : 0;
    if (end < chars.length) view.appendChild(document.createTextNode(chars.slice(end).join("")));
    state.shown = null; // the verdicts the spans show
  }

  function drawHistogram() {
    const chart = $("histogram");
    chart.replaceChildren();
    const { lo, hi } = state;
    const x = (v) => M.left + ((v - lo) / (hi - lo)) * (W - M.left - M.right);
    const counts = new Map(); // bin -> [kept, dropped]
    state.logs.forEach((v, i) => {
      if (v === null) return;
      const bin = Math.floor(v / BIN + 1e-9);
      if (!counts.has(bin)) counts.set(bin, [0, 0]);
      counts.get(bin)[state.keep[i] ? 0 : 1]++;
    });
    let maxCount = 0;
    for (const [k, d] of counts.values()) maxCount = Math.max(maxCount, k + d);
    const y = (c) => M.top + (1 - c / Math.max(maxCount, 1)) * (H - M.top - M.bottom);
    const base = H - M.bottom;
    const tlog = log10(state.threshold);

    svg("rect", { class: "dropped-zone", x: x(tlog), y: M.top, width: Math.max(0, x(hi) - x(tlog)),
                  height: base - M.top }, chart);
    // one bar per bin: kept sentences in the perplexity colour, dropped ones stacked on top in grey
    for (const [bin, [kept, dropped]] of [...counts.entries()].sort((a, b) => a[0] - b[0])) {
      const left = x(bin * BIN), right = x((bin + 1) * BIN);
      const range = `perplexity ${fmt(10 ** (bin * BIN))} to ${fmt(10 ** ((bin + 1) * BIN))}`;
      const parts = [[kept, 0, "kept", colour(10 ** ((bin + 0.5) * BIN))], [dropped, kept, "dropped", "#b3b7bf"]];
      for (const [count, below, verdict, fill] of parts) {
        if (!count) continue;
        const bar = svg("rect", { class: `bar ${verdict}`, "data-bin": bin, "data-count": count, x: left + 0.5,
                                  y: y(below + count), width: Math.max(1, right - left - 1),
                                  height: y(below) - y(below + count), fill }, chart);
        svg("title", {}, bar).textContent = `${range}: ${count} sentence${count === 1 ? "" : "s"} ${verdict}`;
      }
    }
    // axes: decades on x, counts on y
    svg("line", { class: "axis", x1: M.left, x2: W - M.right, y1: base, y2: base }, chart);
    svg("line", { class: "axis", x1: M.left, x2: M.left, y1: M.top, y2: base }, chart);
    for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) {
      svg("line", { class: "axis", x1: x(d), x2: x(d), y1: base, y2: base + 5 }, chart);
      svg("text", { x: x(d), y: base + 18, "text-anchor": "middle" }, chart).textContent = fmtDecade(10 ** d);
    }
    svg("text", { x: W - M.right, y: H - 4, "text-anchor": "end" }, chart).textContent = "perplexity";
    for (const c of [0, maxCount]) {
      svg("text", { x: M.left - 6, y: y(c) + 4, "text-anchor": "end" }, chart).textContent = String(c);
    }
    svg("text", { x: M.left - 6, y: M.top - 10, "text-anchor": "start" }, chart).textContent = "sentences";
    // the threshold
    const tx = x(tlog);
    svg("line", { class: "threshold-line", x1: tx, x2: tx, y1: M.top - 6, y2: base }, chart);
    const label = svg("text", { class: "threshold-label", x: tx + (tx > W - 200 ? -6 : 6), y: M.top + 8,
                                "text-anchor": tx > W - 200 ? "end" : "start" }, chart);
    label.textContent = `threshold ${fmt(state.threshold)}`;
  }

  function render() {
    const { sentences, spans, threshold } = state;
    const keep = decideKeep(state, threshold);
    state.keep = keep;
    let kept = 0, dropped = 0, charsKept = 0, charsDropped = 0;
    sentences.forEach((s, i) => {
      if (!state.shown || state.shown[i] !== keep[i]) { // touch only what changed: long texts stay fluid
        const span = spans[i];
        span.classList.toggle("dropped", !keep[i]);
        span.classList.toggle("kept", keep[i]);
        span.title = `${state.scores[i]}: ${keep[i] ? "kept" : "dropped"}`;
      }
      if (keep[i]) { kept++; charsKept += s.end - s.start; } else { dropped++; charsDropped += s.end - s.start; }
    });
    state.shown = keep;
    $("clean-text").textContent = joinKept(keep);
    const counts = $("counts");
    counts.dataset.kept = kept;
    counts.dataset.dropped = dropped;
    const share = sentences.length ? (100 * dropped / sentences.length).toFixed(1) : "0.0";
    counts.replaceChildren();
    const parts = [
      [`${sentences.length} sentences: `], [`${kept} kept`, "b"], [", "], [`${dropped} dropped`, "b"],
      [` (${share} %; ${charsDropped.toLocaleString("en")} of ${(charsKept + charsDropped).toLocaleString("en")}` +
       " characters)"],
    ];
    for (const [text, tag] of parts) {
      if (tag) el(tag, {}, counts).textContent = text;
      else counts.append(text); // a text node
    }
    $("threshold").value = log10(threshold);
    if (document.activeElement !== $("threshold-number")) $("threshold-number").value = fmt(threshold).replace(/,/g, "");
    drawHistogram();
  }

  function setThreshold(value, byUser = true) {
    if (!state || !(value > 0) || !Number.isFinite(value)) return;
    state.threshold = value;
    userMoved = userMoved || byUser;
    render();
  }

  function showResult(data) {
    const chars = Array.from(data.text);
    const logs = data.sentences.map((s) => (s.perplexity === null ? null : log10(s.perplexity)));
    let lo = log10(data.threshold), hi = lo;
    for (const v of logs) if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    lo = Math.max(0, Math.floor(lo - 0.05));
    hi = Math.ceil(hi + 0.05);
    if (hi - lo < 2) hi = lo + 2;
    const keepUser = userMoved && lastModel === `${data.model}/${data.method}` && state !== null;
    const threshold = keepUser ? clamp(state.threshold, 10 ** lo, 10 ** hi) : data.threshold;
    state = { ...data, chars, logs, lo, hi, threshold, defaultThreshold: data.threshold };
    userMoved = keepUser;
    lastModel = `${data.model}/${data.method}`;
    const slider = $("threshold");
    slider.min = lo;
    slider.max = hi;
    const note = $("passthrough");
    note.hidden = !data.passthrough;
    note.textContent = data.passthrough ? `Passed through unfiltered (${data.passthrough}).` : "";
    const empty = $("empty");
    empty.hidden = !EMPTY_NOTES[data.empty];
    empty.textContent = EMPTY_NOTES[data.empty] || "";
    buildSentenceView();
    $("results").hidden = false;
    render();
  }

  // -- talking to the server ----------------------------------------------------------

  async function score() {
    const text = $("input-text").value;
    if (!text.trim()) {
      setStatus("Paste some text or HTML first.", true);
      return;
    }
    const model = $("model").value || null;
    const format = document.querySelector('input[name="format"]:checked').value;
    const body = { text, format, model, extractor: $("extractor").value || null,
                   method: $("method").value || null, threshold: null };
    if (model && models[model] && models[model].threshold === null) {
      body.threshold = state ? state.threshold : 1000; // a model without a default threshold
    }
    $("score-button").disabled = true;
    setStatus("Scoring ...");
    const started = performance.now();
    try {
      const response = await fetch("api/score", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      let data = null;
      try { data = await response.json(); } catch (e) { data = null; }
      if (!response.ok) {
        const message = data && data.error ? data.error : `HTTP ${response.status}`;
        setStatus(`Error (HTTP ${response.status}): ${message}`, true);
        return;
      }
      showResult(data);
      const ms = Math.round(performance.now() - started);
      setStatus(`Scored ${data.sentences.length} sentences with ${data.model} in ${ms} ms; method ` +
                `${data.method}, default threshold ${fmt(data.threshold)}.`);
    } catch (err) {
      setStatus(`Error: ${err.message}`, true);
    } finally {
      $("score-button").disabled = false;
    }
  }

  async function loadModels() {
    try {
      const response = await fetch("api/models");
      const data = await response.json();
      const select = $("model");
      for (const m of data.models) {
        models[m.name] = m;
        const option = el("option", { value: m.name }, select);
        const about = [m.language, m.tokenizer].filter(Boolean).join(", ");  // e.g. "de, ccnet"
        option.textContent = (m.threshold ? `${m.name} (threshold ${fmt(m.threshold)})` : m.name)
          + (about ? ` [${about}]` : "");
        option.selected = m.name === data.default;
      }
      const extractors = $("extractor");
      for (const name of data.extractors) {
        const option = el("option", { value: name }, extractors);
        option.textContent = name;
        option.selected = name === data.default_extractor;
      }
      for (const name of data.methods) el("option", { value: name }, $("method")).textContent = name;
      document.body.dataset.ready = "1";
    } catch (err) {
      setStatus(`Could not load the model list: ${err.message}`, true);
    }
  }

  function legend() {
    const box = $("legend");
    box.appendChild(document.createTextNode("colour = perplexity: "));
    for (const d of [1, 2, 3, 4, 5]) {
      const swatch = el("span", { class: "swatch" }, box);
      swatch.style.backgroundColor = colour(10 ** d);
      swatch.textContent = fmtDecade(10 ** d);
    }
    box.appendChild(document.createTextNode("; struck through = dropped; hover for the score"));
  }

  // -- wiring ---------------------------------------------------------------------------

  function chartToThreshold(event) {
    if (!state) return;
    const chart = $("histogram");
    const box = chart.getBoundingClientRect();
    const vx = ((event.clientX - box.left) / box.width) * W;
    const v = state.lo + ((vx - M.left) / (W - M.left - M.right)) * (state.hi - state.lo);
    setThreshold(10 ** clamp(v, state.lo, state.hi));
  }

  document.addEventListener("DOMContentLoaded", () => {
    legend();
    loadModels();
    $("score-form").addEventListener("submit", (event) => { event.preventDefault(); score(); });
    $("input-text").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); score(); }
    });
    $("threshold").addEventListener("input", (event) => setThreshold(10 ** Number(event.target.value)));
    $("threshold-number").addEventListener("change", (event) => setThreshold(Number(event.target.value)));
    $("reset-threshold").addEventListener("click", () => {
      if (!state) return;
      userMoved = false;
      setThreshold(state.defaultThreshold, false);
    });
    $("histogram").addEventListener("click", chartToThreshold);
    $("input-file").addEventListener("change", async (event) => {
      const file = event.target.files[0];
      if (!file) return;
      const isHtml = /\.html?$/i.test(file.name) || file.type === "text/html";
      $(isHtml ? "format-html" : "format-text").checked = true;
      setStatus(`Reading ${file.name} ...`);
      if (isHtml) {
        // the server reads the page's bytes as every front end does (BOM, <meta charset>, else UTF-8)
        try {
          const response = await fetch("api/decode", {
            method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: file,
          });
          let data = null;
          try { data = await response.json(); } catch (e) { data = null; }
          if (!response.ok) {
            setStatus(`Error (HTTP ${response.status}): ${data && data.error ? data.error : "cannot read the file"}`,
                      true);
            return;
          }
          $("input-text").value = data.text;
        } catch (err) {
          setStatus(`Error: ${err.message}`, true);
          return;
        }
      } else {
        $("input-text").value = await file.text();
      }
      setStatus(`Loaded ${file.name} (${file.size.toLocaleString("en")} bytes); scoring ...`);
      score();
    });
  });
})();
