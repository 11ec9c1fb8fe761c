// The dashboard: the estimate, its history as a plot, and the annotators' progress, refreshed every 3 s.
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const fmt = (x) => (Number.isFinite(x) ? x.toFixed(3) : "–");

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.appendChild(td);
}

function fillTable(id, rows) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren(...rows.map((values) => {
    const tr = document.createElement("tr");
    values.forEach((v) => cell(tr, v));
    return tr;
  }));
}

function node(tag, attrs, parent) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  parent.appendChild(el);
  return el;
}

// One plot per component: the interval as a band, the estimate as a line, against labels.
function plot(name, points, k) {
  const w = 560, h = 180, pad = 34;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "plot");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  const xs = points.map((p) => p.n_labels);
  const lo = points.map((p) => p.lower[k]), hi = points.map((p) => p.upper[k]);
  const ymin = Math.min(...lo.filter(Number.isFinite)), ymax = Math.max(...hi.filter(Number.isFinite));
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
  const X = (x) => pad + ((x - x0) / (x1 - x0)) * (w - 2 * pad);
  const Y = (y) => h - pad + ((ymin - y) / Math.max(ymax - ymin, 1e-9)) * (h - 2 * pad);
  const band = xs.map((x, i) => `${X(x)},${Y(hi[i])}`).concat(xs.map((x, i) => `${X(x)},${Y(lo[i])}`).reverse());
  node("polygon", {points: band.join(" "), fill: "#bcd", stroke: "none"}, svg);
  node("polyline", {points: xs.map((x, i) => `${X(x)},${Y(points[i].value[k])}`).join(" "), fill: "none",
                    stroke: "#235", "stroke-width": 2}, svg);
  const label = (text, x, y, anchor) => { node("text", {x, y, "font-size": 11, "text-anchor": anchor}, svg).textContent = text; };
  label(name, pad, 14, "start");
  label(fmt(ymax), pad - 4, pad, "end");
  label(fmt(ymin), pad - 4, h - pad, "end");
  label(`${x0} labels`, pad, h - 8, "start");
  label(`${x1}`, w - pad, h - 8, "end");
  return svg;
}

async function refresh() {
  const reply = await fetch("/api/dashboard", {credentials: "same-origin"});
  if (reply.status === 401) { location.href = "/login"; return; }
  const data = await reply.json();
  const est = data.estimate, prog = data.progress;
  document.getElementById("summary").textContent =
    `${est.n_labels} labels in the estimate (${est.n_draws} draws), ${Math.round(est.level * 100)}% intervals; ` +
    `${prog.n_labels} labels in all, ${prog.pending} pending`;
  fillTable("estimate", est.components.map((c) => [c.name, fmt(c.value), `[${fmt(c.lower)}, ${fmt(c.upper)}]`,
                                                  fmt((c.upper - c.lower) / 2)]));
  document.getElementById("basis").textContent = est.interval_basis || "";
  const plan = data.plan;  // kept by `labelwise plan SESSION --half-width ...`, computed beside the server
  const target = plan === null ? "" : `a half-width of ${plan.half_width} at ${Math.round(plan.level * 100)}%`;
  document.getElementById("plan").textContent = plan === null ? "" :
    plan.error !== undefined ? `Plan for ${target}: could not be made (${plan.error}).` :
    plan.computing ? `Plan for ${target}: being computed (pilot runs of the design; labeling goes on meanwhile).` :
    `Plan: about ${plan.labels_needed} more labels (${plan.low} to ${plan.high}) for ${target} with design ` +
    `${plan.design}, as of ${plan.labels_so_far} labels.`;
  fillTable("annotators", prog.per_annotator.map((a) => [a.name, a.label, a.overlap, a.undone]));
  document.getElementById("rate").textContent = `${prog.rate_per_minute.toFixed(1)} answers per minute (last 10 minutes)`;
  const agree = prog.agreement;
  document.getElementById("agreement").textContent = agree === null ? "No overlap configured (serve --overlap)." :
    `Agreement on ${agree.pairs} items answered twice: Cohen's kappa ${agree.cohen_kappa === null ? "–" : fmt(agree.cohen_kappa)}, ` +
    `Krippendorff's alpha ${agree.krippendorff_alpha === null ? "–" : fmt(agree.krippendorff_alpha)}`;
  const points = data.history.length > 1 ? data.history : [];
  document.getElementById("plots").replaceChildren(...(points.length ? est.components.map((c, k) => plot(c.name, points, k))
    : [document.createTextNode("The plot starts after two estimates with different label counts.")]));
}

refresh();
setInterval(refresh, 3000);
