// rbag's interactive chart: plain JavaScript on a canvas, no library, nothing fetched.
// Used by `rbag plot -o OUT.html` and by rbag serve's page.
//
//   rbagChart(container, chart) draws `chart` = {title, x_label, x_kind, origin_ms, panels:
//   [{lines: [{label, x: [..], y: [..]}]}]} into `container` and returns {redraw, reset}.
//   x_kind is "time" (seconds), "iso" (seconds from origin_ms, ticks as UTC clock times),
//   "ns" or "field". Drag across a panel to zoom in on x; double-click to zoom out again; the
//   readout under the chart gives each line's value at the cursor.
"use strict";
(function (global) {
  const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#17becf"];

  function niceStep(span, target) {
    const raw = span / Math.max(1, target);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const n = raw / mag;
    return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * mag;
  }

  function ticks(lo, hi, target) {
    if (!(hi > lo)) return [lo];
    const step = niceStep(hi - lo, target);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return out;
  }

  function numberLabel(v) {
    const a = Math.abs(v);
    if (v === 0) return "0";
    if (a >= 1e7 || a < 1e-4) return v.toExponential(3);
    return String(parseFloat(v.toFixed(6)));
  }

  function range(values, margin) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) {
      if (v === null || !isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (lo > hi) return [0, 1];
    if (lo === hi) { const p = lo === 0 ? 1 : Math.abs(lo) * 0.1; return [lo - p, hi + p]; }
    const p = margin ? (hi - lo) * 0.05 : 0;
    return [lo - p, hi + p];
  }

  // Per pixel column: first, smallest, largest, last point (what Rust's downsample::m4 does).
  function m4(xs, ys, x0, x1, columns) {
    const idx = [];
    let i = 0;
    const n = xs.length;
    while (i < n && xs[i] < x0) i++;
    if (i > 0) idx.push(i - 1);
    let end = i;
    while (end < n && xs[end] <= x1) end++;
    if (end - i <= 4 * columns) {
      for (let k = i; k < end; k++) idx.push(k);
    } else {
      const scale = columns / (x1 - x0);
      while (i < end) {
        const c = Math.floor((xs[i] - x0) * scale);
        let first = i, mn = i, mx = i, last = i;
        while (last + 1 < end && Math.floor((xs[last + 1] - x0) * scale) === c) {
          last++;
          if (ys[last] < ys[mn]) mn = last;
          if (ys[last] > ys[mx]) mx = last;
        }
        const pick = [first, mn, mx, last].sort((a, b) => a - b);
        for (let k = 0; k < 4; k++) if (k === 0 || pick[k] !== pick[k - 1]) idx.push(pick[k]);
        i = last + 1;
      }
    }
    if (end < n) idx.push(end);
    return idx;
  }

  function rbagChart(container, chart) {
    container.innerHTML = "";
    const canvas = document.createElement("canvas");
    canvas.style.width = "100%";
    canvas.style.display = "block";
    const readout = document.createElement("div");
    readout.className = "rbag-readout";
    readout.style.cssText = "font: 12px sans-serif; min-height: 1.4em; color: #333; white-space: pre";
    container.appendChild(canvas);
    container.appendChild(readout);
    const ctx = canvas.getContext("2d");
    const all = [];
    chart.panels.forEach(p => p.lines.forEach(l => all.push(l)));
    const full = range([].concat(...all.map(l => l.x)), false);
    let view = full.slice();
    let drag = null, cursor = null, boxes = [];
    const M = { left: 80, right: 20, top: 34, bottom: 44, gap: 14 };

    function xTick(v) {
      if (chart.x_kind === "iso") {
        const d = new Date(chart.origin_ms + v * 1000);
        return d.toISOString().substring(11, 23);
      }
      return numberLabel(v);
    }

    function draw() {
      const dpr = window.devicePixelRatio || 1;
      const W = container.clientWidth || 800;
      const H = Math.max(240, Math.round(W * 0.55));
      canvas.width = W * dpr; canvas.height = H * dpr; canvas.style.height = H + "px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
      ctx.fillStyle = "#000"; ctx.font = "16px sans-serif"; ctx.textAlign = "center";
      ctx.fillText(chart.title, W / 2, 22);
      const n = Math.max(1, chart.panels.length);
      const ph = (H - M.top - M.bottom - M.gap * (n - 1)) / n;
      const pw = W - M.left - M.right;
      boxes = [];
      let colour = 0;
      const readings = [];
      chart.panels.forEach((panel, pi) => {
        const top = M.top + pi * (ph + M.gap);
        const box = { x: M.left, y: top, w: pw, h: ph };
        boxes.push(box);
        const visible = [];
        panel.lines.forEach(l => { const k = m4(l.x, l.y, view[0], view[1], pw); visible.push(k); });
        const yr = range([].concat(...panel.lines.map((l, li) => visible[li].map(k => l.y[k]))), true);
        const X = v => box.x + (v - view[0]) / (view[1] - view[0]) * box.w;
        const Y = v => box.y + box.h - (v - yr[0]) / (yr[1] - yr[0]) * box.h;
        ctx.strokeStyle = "#ddd"; ctx.lineWidth = 1; ctx.fillStyle = "#333"; ctx.font = "12px sans-serif";
        ctx.textAlign = "right"; ctx.textBaseline = "middle";
        for (const t of ticks(yr[0], yr[1], Math.max(2, ph / 50))) {
          ctx.beginPath(); ctx.moveTo(box.x, Y(t)); ctx.lineTo(box.x + box.w, Y(t)); ctx.stroke();
          ctx.fillText(numberLabel(t), box.x - 6, Y(t));
        }
        ctx.textAlign = "center"; ctx.textBaseline = "top";
        for (const t of ticks(view[0], view[1], Math.max(2, pw / 110))) {
          ctx.beginPath(); ctx.moveTo(X(t), box.y); ctx.lineTo(X(t), box.y + box.h); ctx.stroke();
          if (pi === n - 1) ctx.fillText(xTick(t), X(t), box.y + box.h + 6);
        }
        ctx.strokeStyle = "#000"; ctx.strokeRect(box.x, box.y, box.w, box.h);
        ctx.save();
        ctx.beginPath(); ctx.rect(box.x, box.y, box.w, box.h); ctx.clip();
        const legend = [];
        panel.lines.forEach((l, li) => {
          const c = COLOURS[colour++ % COLOURS.length];
          ctx.strokeStyle = c; ctx.fillStyle = c; ctx.lineWidth = 1.2;
          ctx.beginPath();
          let pen = false;
          const ks = visible[li];
          for (const k of ks) {
            const y = l.y[k];
            if (y === null || !isFinite(y)) { pen = false; continue; }
            if (pen) ctx.lineTo(X(l.x[k]), Y(y)); else { ctx.moveTo(X(l.x[k]), Y(y)); pen = true; }
          }
          ctx.stroke();
          if (ks.length <= 60) for (const k of ks) if (l.y[k] !== null) ctx.fillRect(X(l.x[k]) - 2, Y(l.y[k]) - 2, 4, 4);
          legend.push([l.label, c]);
          if (cursor !== null && chart.x_kind !== "field") {
            // The latest point at or before the cursor.
            let lo = 0, hi = l.x.length - 1, at = -1;
            while (lo <= hi) { const mid = (lo + hi) >> 1; if (l.x[mid] <= cursor) { at = mid; lo = mid + 1; } else hi = mid - 1; }
            if (at >= 0) readings.push(l.label + " = " + l.y[at]);
          }
        });
        ctx.restore();
        ctx.font = "12px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
        const lw = Math.max(...legend.map(([s]) => ctx.measureText(s).width), 0) + 36;
        if (legend.length) {
          ctx.fillStyle = "rgba(255,255,255,0.85)"; ctx.strokeStyle = "#999";
          ctx.fillRect(box.x + box.w - lw - 8, box.y + 8, lw, legend.length * 16 + 6);
          ctx.strokeRect(box.x + box.w - lw - 8, box.y + 8, lw, legend.length * 16 + 6);
          legend.forEach(([s, c], k) => {
            const y = box.y + 19 + k * 16;
            ctx.strokeStyle = c; ctx.lineWidth = 2;
            ctx.beginPath(); ctx.moveTo(box.x + box.w - lw, y); ctx.lineTo(box.x + box.w - lw + 20, y); ctx.stroke();
            ctx.fillStyle = "#000"; ctx.fillText(s, box.x + box.w - lw + 26, y);
          });
        }
        if (cursor !== null) {
          ctx.strokeStyle = "rgba(0,0,0,0.4)"; ctx.lineWidth = 1;
          ctx.beginPath(); ctx.moveTo(X(cursor), box.y); ctx.lineTo(X(cursor), box.y + box.h); ctx.stroke();
        }
        if (drag && drag.x1 !== undefined) {
          ctx.fillStyle = "rgba(31,119,180,0.15)";
          ctx.fillRect(Math.min(drag.x0, drag.x1), box.y, Math.abs(drag.x1 - drag.x0), box.h);
        }
      });
      ctx.fillStyle = "#000"; ctx.font = "13px sans-serif"; ctx.textAlign = "center"; ctx.textBaseline = "alphabetic";
      ctx.fillText(chart.x_label, M.left + pw / 2, H - 6);
      readout.textContent = cursor === null ? "" : "x = " + xTick(cursor) + "   " + readings.join("   ");
    }

    function xAt(px) {
      const b = boxes[0];
      return view[0] + (px - b.x) / b.w * (view[1] - view[0]);
    }
    canvas.addEventListener("mousedown", e => { drag = { x0: e.offsetX }; });
    canvas.addEventListener("mousemove", e => {
      cursor = xAt(e.offsetX);
      if (drag) drag.x1 = e.offsetX;
      draw();
    });
    canvas.addEventListener("mouseup", e => {
      if (drag && drag.x1 !== undefined && Math.abs(drag.x1 - drag.x0) > 4) {
        const a = xAt(Math.min(drag.x0, drag.x1)), b = xAt(Math.max(drag.x0, drag.x1));
        view = [a, b];
      }
      drag = null;
      draw();
    });
    canvas.addEventListener("mouseleave", () => { cursor = null; drag = null; draw(); });
    canvas.addEventListener("dblclick", () => { view = full.slice(); draw(); });
    window.addEventListener("resize", draw);
    draw();
    return { redraw: draw, reset: () => { view = full.slice(); draw(); } };
  }

  global.rbagChart = rbagChart;
})(window);
