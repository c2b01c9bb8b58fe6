"""The browser half of the Map's image mode (`canvas`), plain JavaScript with no library:
plotly.js (a 4.7 MB script, parsed and run before anything shows) costs more than the
whole draw of a big map, which is one PNG and a sample of markers.

It draws the server's image to a canvas fitted to the data's extent (square data units),
axes with round ticks, the markers in their traces' colors and a legend. Hovering near a
marker shows its trace's name (set as text, never markup); a click on one, a lasso or a
box is kept as the component's `selection` state in plotly's event shape (a point's
trace and index; a shape's vertices in data coordinates), which the server turns into
rows (`selection`). The root's `data-drawn` is set once the image is painted and
`data-shape` holds the last shape sent (what tests and the benchmark read).
"""

JS = r"""
const PAD = {left: 52, right: 12, top: 10, bottom: 28};
const NEAR = 8;  // pixels from a marker that still hover or click it

function niceTicks(lo, hi, most) {
  const raw = (hi - lo) / most;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(+v.toFixed(10));
  return out;
}

// Styles inline: the page's own CSS never reaches or depends on them.
const STYLE = {
  "podium-map": "font-family: sans-serif;",
  "podium-map-bar": "display: flex; gap: 6px; margin-bottom: 4px;",
  "podium-map-tool": "font-size: 12px; padding: 2px 10px; border: 1px solid #bbb;"
    + " border-radius: 4px; background: #fff; cursor: pointer;",
  "podium-map-stage": "position: relative;",
  "podium-map-base": "display: block;",
  "podium-map-over": "position: absolute; left: 0; top: 0; cursor: crosshair;"
    + " touch-action: none;",
  "podium-map-tip": "position: absolute; display: none; pointer-events: none;"
    + " max-width: 360px; background: rgba(30, 30, 30, 0.88); color: #fff; font-size: 12px;"
    + " padding: 3px 6px; border-radius: 3px; white-space: pre-wrap;",
  "podium-map-legend": "display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12px;"
    + " margin-top: 4px;",
  "podium-map-swatch": "display: inline-block; width: 10px; height: 10px;"
    + " border-radius: 50%; margin-right: 4px; vertical-align: middle;",
};

function el(tag, cls, parent) {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
    node.style.cssText = STYLE[cls] || "";
  }
  if (parent) parent.appendChild(node);
  return node;
}

export default function (component) {
  const {data, parentElement, setStateValue} = component;
  if (!data) return;
  const before = parentElement.querySelector(".podium-map");  // a rerun's draw: keep its shape
  parentElement.replaceChildren();
  const root = el("div", "podium-map", parentElement);
  root.dataset.testid = "podium-map";
  if (before && before.dataset.shape) root.dataset.shape = before.dataset.shape;
  const bar = el("div", "podium-map-bar", root);
  const tools = {};
  for (const [name, label] of [["lasso", "Lasso"], ["box", "Box"]]) {
    const button = el("button", "podium-map-tool", bar);
    button.type = "button";
    button.textContent = label;
    button.setAttribute("aria-label", label + " select");
    button.onclick = () => setTool(name);
    tools[name] = button;
  }
  const stage = el("div", "podium-map-stage", root);
  const base = el("canvas", "podium-map-base", stage);
  const over = el("canvas", "podium-map-over", stage);
  const tip = el("div", "podium-map-tip", stage);
  const legend = el("div", "podium-map-legend", root);
  data.traces.forEach((t) => {
    const item = el("span", "podium-map-key", legend);
    el("i", "podium-map-swatch", item).style.background = t.color;
    el("span", "", item).textContent = t.name;
  });

  let tool = "lasso";
  function setTool(name) {
    tool = name;
    for (const [key, button] of Object.entries(tools)) {
      button.setAttribute("aria-pressed", String(key === name));
      button.style.background = key === name ? "#e6ecf5" : "#fff";
    }
  }
  setTool("lasso");

  const [x0, x1, y0, y1] = data.extent;
  const height = data.height;
  let width = 0, scale = 1, ox = 0, oy = 0;
  const toPx = (x, y) => [ox + (x - x0) * scale, oy + (y1 - y) * scale];
  const toData = (px, py) => [x0 + (px - ox) / scale, y1 - (py - oy) / scale];

  const image = new Image();
  function layout() {
    width = stage.clientWidth || 800;
    const dpr = window.devicePixelRatio || 1;
    for (const c of [base, over]) {
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
      c.style.width = width + "px";
      c.style.height = height + "px";
      c.getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    const plotW = width - PAD.left - PAD.right, plotH = height - PAD.top - PAD.bottom;
    scale = Math.min(plotW / (x1 - x0), plotH / (y1 - y0));
    ox = PAD.left + (plotW - (x1 - x0) * scale) / 2;
    oy = PAD.top + (plotH - (y1 - y0) * scale) / 2;
  }

  function draw() {
    layout();
    const g = base.getContext("2d");
    g.clearRect(0, 0, width, height);
    const [left, top] = toPx(x0, y1), [right, bottom] = toPx(x1, y0);
    if (image.complete && image.naturalWidth) {
      g.imageSmoothingEnabled = false;
      g.drawImage(image, left, top, right - left, bottom - top);
    }
    g.strokeStyle = "#999";
    g.fillStyle = "#555";
    g.font = "11px sans-serif";
    g.strokeRect(left, top, right - left, bottom - top);
    g.textAlign = "center";
    g.textBaseline = "top";
    for (const v of niceTicks(x0, x1, 8)) {
      const [px] = toPx(v, y0);
      g.beginPath(); g.moveTo(px, bottom); g.lineTo(px, bottom + 4); g.stroke();
      g.fillText(String(v), px, bottom + 6);
    }
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const v of niceTicks(y0, y1, 6)) {
      const [, py] = toPx(x0, v);
      g.beginPath(); g.moveTo(left - 4, py); g.lineTo(left, py); g.stroke();
      g.fillText(String(v), left - 6, py);
    }
    const radius = data.marker_size / 2;
    data.traces.forEach((t) => {
      g.fillStyle = t.color;
      g.beginPath();
      for (let i = 0; i < t.x.length; i++) {
        const [px, py] = toPx(t.x[i], t.y[i]);
        g.moveTo(px + radius, py);
        g.arc(px, py, radius, 0, 2 * Math.PI);
      }
      g.fill();
    });
  }

  function nearest(px, py) {
    let best = null, bestD = NEAR * NEAR;
    data.traces.forEach((t, c) => {
      for (let i = 0; i < t.x.length; i++) {
        const [qx, qy] = toPx(t.x[i], t.y[i]);
        const d = (qx - px) ** 2 + (qy - py) ** 2;
        if (d <= bestD) { bestD = d; best = [c, i]; }
      }
    });
    return best;
  }

  const at = (e) => {
    const r = over.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  let path = null;
  function outline() {
    const g = over.getContext("2d");
    g.clearRect(0, 0, width, height);
    if (!path || path.length < 2) return;
    g.strokeStyle = "#222";
    g.setLineDash([4, 3]);
    g.fillStyle = "rgba(60, 60, 60, 0.08)";
    g.beginPath();
    if (tool === "box") {
      const [[ax, ay], [bx, by]] = [path[0], path[path.length - 1]];
      g.rect(ax, ay, bx - ax, by - ay);
    } else {
      path.forEach(([px, py], n) => (n ? g.lineTo(px, py) : g.moveTo(px, py)));
      g.closePath();
    }
    g.fill();
    g.stroke();
  }
  function send(selection, shape) {
    if (shape) root.dataset.shape = JSON.stringify(shape);
    else delete root.dataset.shape;
    setStateValue("selection", selection);
  }
  over.addEventListener("pointerdown", (e) => {
    over.setPointerCapture(e.pointerId);
    path = [at(e)];
    tip.style.display = "none";
  });
  over.addEventListener("pointermove", (e) => {
    const [px, py] = at(e);
    if (path) {
      path.push([px, py]);
      outline();
      return;
    }
    const found = nearest(px, py);
    if (!found) { tip.style.display = "none"; return; }
    tip.textContent = data.traces[found[0]].name;
    tip.style.left = px + 12 + "px";
    tip.style.top = py + 12 + "px";
    tip.style.display = "block";
  });
  over.addEventListener("pointerup", (e) => {
    if (!path) return;
    path.push(at(e));
    const done = path;
    path = null;
    const [sx, sy] = done[0];
    const moved = Math.max(...done.map(([px, py]) => Math.abs(px - sx) + Math.abs(py - sy)));
    if (moved < 4) {
      outline();
      const found = nearest(...done[0]);
      if (found) send({points: [{curve_number: found[0], point_index: found[1]}]}, null);
      return;
    }
    if (tool === "box") {
      const [ax, ay] = toData(...done[0]), [bx, by] = toData(...done[done.length - 1]);
      const shape = {x: [ax, bx], y: [ay, by]};
      path = [done[0], done[done.length - 1]];
      outline();
      path = null;
      send({box: [shape]}, {box: true, ...shape});
      return;
    }
    const vertices = done.map(([px, py]) => toData(px, py));
    const shape = {x: vertices.map((v) => v[0]), y: vertices.map((v) => v[1])};
    path = done;
    outline();
    path = null;
    send({lasso: [shape]}, {box: false, ...shape});
  });
  over.addEventListener("pointerleave", () => { tip.style.display = "none"; });

  const resized = new ResizeObserver(() => { if (stage.clientWidth !== width) draw(); });
  resized.observe(stage);
  image.onload = () => {
    draw();
    root.dataset.markers = String(data.traces.reduce((n, t) => n + t.x.length, 0));
    requestAnimationFrame(() => { root.dataset.drawn = String(performance.now()); });
  };
  image.src = data.image;
  draw();
  return () => resized.disconnect();
}
"""
