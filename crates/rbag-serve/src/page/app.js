// rbag serve's quick-look page: topics, a density timeline with a cursor, a plot of any
// numeric field, and the latest image at the cursor. Plain JavaScript; everything comes from
// this server's /api (nothing is fetched from elsewhere).
"use strict";
(async function () {
  const $ = id => document.getElementById(id);
  const state = { summary: null, density: null, cursorNs: null };

  async function api(path) {
    const r = await fetch(path);
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = value; o.textContent = text === undefined ? value : text;
    select.appendChild(o);
  }

  // --- summary and topic table -------------------------------------------------------------
  const s = await api("/api/summary");
  state.summary = s;
  $("bags").textContent = s.bags.join(", ") + " \u2014 " + s.message_count + " messages, " + s.duration_s.toFixed(3) + " s";
  $("ws").textContent = s.ws_url;
  $("foxglove").href = "https://app.foxglove.dev/~/view?ds=foxglove-websocket&ds.url=" + encodeURIComponent(s.ws_url);
  const tbody = $("topics").querySelector("tbody");
  for (const t of s.topics) {
    const tr = document.createElement("tr");
    if (t.image) tr.className = "image";
    const rate = t.rate_hz === null || t.rate_hz === undefined ? "" : t.rate_hz.toFixed(t.rate_hz < 10 ? 2 : 1);
    for (const [text, cls] of [[t.topic, ""], [t.type, ""], [String(t.count), "num"], [rate, "num"]]) {
      const td = document.createElement("td");
      td.textContent = text; if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  const startNs = BigInt(s.start_ns), endNs = BigInt(s.end_ns);
  const spanNs = Number(endNs - startNs) || 1;
  state.cursorNs = endNs;

  // --- timeline ------------------------------------------------------------------------------
  const timeline = $("timeline");
  const ROW = 16, LABEL = 220;
  function drawTimeline() {
    const d = state.density;
    if (!d) return;
    const names = Object.keys(d.topics);
    const dpr = window.devicePixelRatio || 1;
    const W = timeline.clientWidth || 800, H = names.length * ROW + 24;
    timeline.width = W * dpr; timeline.height = H * dpr; timeline.style.height = H + "px";
    const ctx = timeline.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    const plotW = W - LABEL - 8;
    names.forEach((name, i) => {
      const counts = d.topics[name];
      const max = Math.max(1, ...counts);
      ctx.fillStyle = "#333"; ctx.textAlign = "right";
      ctx.fillText(name, LABEL - 6, i * ROW + ROW / 2);
      const bw = plotW / counts.length;
      counts.forEach((c, b) => {
        if (!c) return;
        const a = 0.15 + 0.85 * c / max;
        ctx.fillStyle = "rgba(31,119,180," + a.toFixed(3) + ")";
        ctx.fillRect(LABEL + b * bw, i * ROW + 2, Math.max(1, bw), ROW - 4);
      });
    });
    ctx.fillStyle = "#666"; ctx.textAlign = "left";
    ctx.fillText("0 s", LABEL, H - 10);
    ctx.textAlign = "right";
    ctx.fillText((spanNs / 1e9).toFixed(3) + " s", W - 8, H - 10);
    const x = LABEL + Number(state.cursorNs - startNs) / spanNs * plotW;
    ctx.strokeStyle = "#d62728"; ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, H - 20); ctx.stroke();
    $("cursor-time").textContent = "cursor at " + (Number(state.cursorNs - startNs) / 1e9).toFixed(3) + " s";
  }
  timeline.addEventListener("click", e => {
    const plotW = timeline.clientWidth - LABEL - 8;
    const f = Math.min(1, Math.max(0, (e.offsetX - LABEL) / plotW));
    state.cursorNs = startNs + BigInt(Math.round(f * spanNs));
    drawTimeline();
    showImage();
  });
  window.addEventListener("resize", drawTimeline);
  try {
    state.density = await api("/api/density?bins=" + Math.max(50, Math.min(2000, Math.round((timeline.clientWidth || 800) - LABEL))));
    drawTimeline();
  } catch (e) {
    $("cursor-time").textContent = "timeline: " + e.message;
  }

  // --- plot --------------------------------------------------------------------------------
  const plotTopic = $("plot-topic"), plotField = $("plot-field");
  option(plotTopic, "", "(choose a topic)");
  for (const t of s.topics) if (!t.image) option(plotTopic, t.topic);
  plotTopic.addEventListener("change", async () => {
    plotField.innerHTML = "";
    if (!plotTopic.value) return;
    $("plot-status").textContent = "reading fields\u2026";
    try {
      const f = await api("/api/fields?topic=" + encodeURIComponent(plotTopic.value));
      option(plotField, "", f.fields.length ? "(choose a field)" : "(no numeric fields)");
      for (const name of f.fields) option(plotField, name);
      $("plot-status").textContent = f.fields.length + " numeric field(s)";
    } catch (e) {
      $("plot-status").textContent = e.message; $("plot-status").className = "error";
    }
  });
  plotField.addEventListener("change", async () => {
    if (!plotField.value) return;
    $("plot-status").textContent = "reading " + plotField.value + "\u2026";
    try {
      const chart = await api("/api/series?field=" + encodeURIComponent(plotField.value));
      window.rbagPlot = rbagChart($("plot"), chart);
      const n = chart.panels[0].lines.reduce((a, l) => a + l.x.length, 0);
      $("plot-status").textContent = n + " point(s)" + (chart.reduced ? " (reduced per pixel column)" : "");
      $("plot").dataset.points = String(n);
    } catch (e) {
      $("plot-status").textContent = e.message; $("plot-status").className = "error";
    }
  });

  // --- image at the cursor -----------------------------------------------------------------
  const imageTopic = $("image-topic"), img = $("image");
  const images = s.topics.filter(t => t.image);
  if (!images.length) option(imageTopic, "", "(no image topics)");
  for (const t of images) option(imageTopic, t.topic);
  function showImage() {
    if (!imageTopic.value) return;
    const url = "/api/image?topic=" + encodeURIComponent(imageTopic.value) + "&t=" + state.cursorNs.toString();
    $("image-status").textContent = "";
    img.onerror = async () => {
      img.removeAttribute("src");
      try { await api(url); } catch (e) { $("image-status").textContent = e.message; }
    };
    img.onload = () => { $("image-status").textContent = img.naturalWidth + "\u00d7" + img.naturalHeight; };
    img.src = url;
  }
  imageTopic.addEventListener("change", showImage);
  showImage();
  window.rbagPageReady = true;
})().catch(e => {
  document.body.insertAdjacentHTML("afterbegin", "<p class=\"error\">" + String(e.message).replace(/</g, "&lt;") + "</p>");
  window.rbagPageReady = true;
});
