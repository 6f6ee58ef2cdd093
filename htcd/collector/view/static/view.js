// The pool view: reads /view/api (docs/view.md) and draws it with uPlot.  No build step.
// After each render every chart's container carries data-points (the points drawn) and <body>
// data-ready="1", so a test (or a curious admin) can tell the page has finished.
"use strict";

const API = "/view/api/";
const STATES = ["Claimed", "Unclaimed", "Matched", "Preempting", "Owner", "Drained", "Backfill"];
const COLORS = {
  Claimed: "#2e7d32", Unclaimed: "#1e88e5", Matched: "#fbc02d", Preempting: "#e53935", Owner: "#8e24aa",
  Drained: "#6d4c41", Backfill: "#00acc1", Idle: "#1e88e5", Running: "#2e7d32", Held: "#e53935",
  Total: "#37474f",
};
const PALETTE = ["#1e88e5", "#2e7d32", "#e53935", "#fbc02d", "#8e24aa", "#00acc1", "#6d4c41", "#f4511e",
  "#3949ab", "#7cb342", "#d81b60", "#546e7a"];
const JOB_STATES = ["Running", "Idle", "Held"];

const params = new URLSearchParams(location.search);
const view = { count: params.get("count") === "cpus" ? "cpus" : "slots", range: params.get("range") || "day", start: params.get("start"), end: params.get("end"), arch: params.get("arch") || "", user: params.get("user") || "" };
const charts = {};
let data = {};

function color(key, i) { return COLORS[key] || PALETTE[i % PALETTE.length]; }

async function getJSON(path) {
  let resp;
  try { resp = await fetch(API + path, { cache: "no-store" }); } catch (e) { throw new Error(`${API}${path}: ${e.message || e}`); }
  const text = await resp.text();
  let body;
  try { body = JSON.parse(text); } catch (e) { body = { error: text.trim() }; }
  if (!resp.ok) throw new Error(`${API}${path}: ${resp.status} ${body.error || text.trim()}`);
  return body;
}

function fmt(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (digits === undefined) digits = Math.abs(v) >= 100 || Number.isInteger(v) ? 0 : 2;
  return v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function fillTable(table, head, rows) {
  table.replaceChildren(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c, i) => el(i ? "td" : "th", i ? { class: "num" } : {}, c))))));
}

// Columns of a series reply, keeping only the keys asked for (all when keys is null) in that order.
function pick(series, keys) {
  const cols = series.columns || {};
  const names = keys ? keys.filter((k) => k in cols) : Object.keys(cols).sort();
  return names.map((k) => [k, cols[k]]);
}

function stats(values) {
  let n = 0, sum = 0, peak = null, min = null, last = null;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    n++; sum += v; last = v;
    peak = peak === null ? v : Math.max(peak, v);
    min = min === null ? v : Math.min(min, v);
  }
  return { avg: n ? sum / n : null, peak, min, last };
}

// Sum columns point by point (nulls count as absent; all absent stays null).
function sumColumns(columns, length) {
  const out = new Array(length).fill(null);
  for (const col of columns) {
    col.forEach((v, i) => { if (v !== null && v !== undefined) out[i] = (out[i] || 0) + v; });
  }
  return out;
}

// A big pool has a duty cycle per daemon and a priority per user: a chart keeps the MAX_LINES
// with the highest peaks (the tables keep everyone) and says how many it left out.
const MAX_LINES = 12;

function topLines(named) {
  if (named.length <= MAX_LINES) return [named, 0];
  const peak = ([, v]) => Math.max(...v.filter((x) => x !== null && x !== undefined), -Infinity);
  const kept = new Set(named.slice().sort((a, b) => peak(b) - peak(a)).slice(0, MAX_LINES).map(([k]) => k));
  return [named.filter(([k]) => kept.has(k)), named.length - kept.size];
}

function draw(id, t, all, opts) {
  const box = document.getElementById(id);
  if (charts[id]) { charts[id].destroy(); delete charts[id]; }
  box.replaceChildren();
  const [named, left] = topLines(all);
  box.dataset.hidden = String(left);
  let points = 0;
  for (const [, values] of named) for (const v of values) if (v !== null && v !== undefined) points++;
  box.dataset.points = String(points);
  box.dataset.series = String(named.length);
  if (!t.length || !named.length) {
    box.append(el("p", { class: "empty" }, "No samples in this range yet."));
    return;
  }
  const width = Math.max(300, box.clientWidth || 600);
  const series = [{}].concat(named.map(([name], i) => ({
    label: name, stroke: color(name, i), width: 2, points: { show: t.length < 60 },
    fill: opts && opts.fill ? color(name, i) + "22" : undefined,
    value: (u, v) => fmt(v),
  })));
  const axes = [{}, { label: (opts && opts.unit) || "", size: 60, values: (u, vals) => vals.map((v) => fmt(v)) }];
  charts[id] = new uPlot({
    width, height: (opts && opts.height) || 240, series, axes,
    scales: { x: { time: true }, y: { range: (u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.1 : 1] } },
    legend: { live: true },
  }, [t].concat(named.map(([, v]) => v)), box);
  if (left) box.append(el("p", { class: "muted" }, `The ${MAX_LINES} highest of ${all.length}; ${left} more not drawn.`));
}

function statsRows(named, given) {
  return named.map(([k, values]) => {
    const s = (given && given[k]) || stats(values);
    return [k, fmt(s.avg, 2), fmt(s.peak), fmt(s.min), fmt(s.last)];
  });
}

function renderMachines() {
  let named, st;
  // CPUs are counted by state for the whole pool only (the store keeps no CPUs per arch)
  const count = document.getElementById("count");
  count.value = view.count;
  count.disabled = Boolean(view.arch);
  if (!view.arch) {
    const s = view.count === "cpus" ? data.cpus_by_state : data.slots_by_state;
    named = pick(s, STATES).filter(([, v]) => v.some((x) => x));
    if (!named.length) named = pick(s, STATES);
    st = s.stats;
    draw("chart-machines", s.t, named, { unit: view.count === "cpus" ? "CPUs" : "slots", height: 300, fill: true });
  } else {
    const total = (data.slots_by_arch.columns || {})[view.arch] || [];
    const claimed = (data.claimed_by_arch.columns || {})[view.arch] || [];
    const other = total.map((v, i) => (v === null || claimed[i] === null || claimed[i] === undefined ? null : v - claimed[i]));
    named = [["Total", total], ["Claimed", claimed], ["Not claimed", other]];
    draw("chart-machines", data.slots_by_arch.t, named, { unit: "slots", height: 300 });
  }
  fillTable(document.getElementById("machines-stats"), ["State", "Average", "Peak", "Min", "Now"], statsRows(named, st));
}

function renderJobs() {
  const s = data.jobs_by_user;
  const cols = s.columns || {};
  const users = [...new Set(Object.keys(cols).map((k) => k.slice(0, k.lastIndexOf("/"))))].sort();
  const sel = document.getElementById("user");
  sel.replaceChildren(el("option", { value: "" }, "All users"), ...users.map((u) => el("option", { value: u }, u)));
  if (view.user && !users.includes(view.user)) view.user = "";
  sel.value = view.user;
  const named = JOB_STATES.map((state) => {
    const parts = Object.entries(cols).filter(([k]) => k.endsWith("/" + state) && (!view.user || k === view.user + "/" + state));
    return [state, sumColumns(parts.map(([, v]) => v), s.t.length)];
  });
  draw("chart-jobs", s.t, named, { unit: "jobs" });
  const rows = [];
  for (const u of users) {
    const st = {};
    for (const state of JOB_STATES) st[state] = stats(cols[u + "/" + state] || []);
    rows.push([u, fmt(st.Running.avg, 2), fmt(st.Running.peak), fmt(st.Idle.avg, 2), fmt(st.Idle.peak),
      fmt(st.Held.peak), fmt(st.Running.last), fmt(st.Idle.last), fmt(st.Held.last)]);
  }
  fillTable(document.getElementById("jobs-stats"),
    ["User", "Running avg", "Running peak", "Idle avg", "Idle peak", "Held peak", "Running now", "Idle now", "Held now"], rows);
}

function renderUsers() {
  const usage = data.user_usage, prio = data.user_priority;
  const inUse = pick(usage, null).filter(([k]) => !k.endsWith("/accumulated"));
  draw("chart-usage", usage.t, inUse, { unit: "resources" });
  draw("chart-priority", prio.t, pick(prio, null), { unit: "priority" });
  const users = [...new Set(Object.keys(prio.columns || {}).concat(inUse.map(([k]) => k)))].sort();
  const pst = prio.stats || {}, ust = usage.stats || {};
  fillTable(document.getElementById("users-stats"),
    ["User", "Priority now", "Priority avg", "In use avg", "In use peak", "Accumulated usage"],
    users.map((u) => {
      const p = pst[u] || {}, r = ust[u] || {}, acc = ust[u + "/accumulated"] || {};
      return [u, fmt(p.last, 2), fmt(p.avg, 2), fmt(r.avg, 2), fmt(r.peak), fmt(acc.last, 1)];
    }));
}

function renderNegotiation() {
  const s = data.negotiation_cycle;
  draw("chart-cycle", s.t, pick(s, ["duration"]), { unit: "seconds" });
  draw("chart-matches", s.t, pick(s, ["matches", "rejections", "submitters"]), {});
}

function renderDuty() {
  const s = data.duty_cycle;
  // RecentDaemonCoreDutyCycle is the share of time busy: drawn in percent
  const pct = pick(s, null).map(([k, v]) => [k, v.map((x) => (x === null || x === undefined ? null : x * 100))]);
  draw("chart-duty", s.t, pct, { unit: "% busy" });
}

function renderNow(now) {
  document.getElementById("now-time").textContent = "at " + new Date(now.time * 1000).toLocaleString();
  const keys = ["Total", "Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill"];
  const st = now.status_total || { rows: [], total: {} };
  fillTable(document.getElementById("status-total"), ["Arch/OpSys"].concat(keys),
    st.rows.map((r) => [r.arch].concat(keys.map((k) => fmt(r[k] || 0))))
      .concat([["Total"].concat(keys.map((k) => fmt((st.total || {})[k] || 0)))]));
  const q = now.queue_totals || {};
  const qkeys = ["jobs", "completed", "removed", "idle", "running", "held", "suspended"];
  const bySchedd = Object.entries(q.by_schedd || {}).sort();
  fillTable(document.getElementById("queue-totals"), ["Schedd"].concat(qkeys),
    bySchedd.map(([n, v]) => [n].concat(qkeys.map((k) => fmt(v[k] || 0))))
      .concat([["Total"].concat(qkeys.map((k) => fmt(q[k] || 0)))]));
}

function archOptions(list) {
  const sel = document.getElementById("arch");
  const arches = (list.series.slots_by_arch || []).slice().sort();
  sel.replaceChildren(el("option", { value: "" }, "All"), ...arches.map((a) => el("option", { value: a }, a)));
  if (view.arch && !arches.includes(view.arch)) view.arch = "";
  sel.value = view.arch;
}

const NAMES = ["slots_by_state", "cpus_by_state", "slots_by_arch", "claimed_by_arch", "jobs_by_user", "user_usage", "user_priority",
  "negotiation_cycle", "duty_cycle"];

// The API's time range: the chosen range, or start/end (Unix seconds) given in the page's address.
function span() {
  if (view.start && view.end) return `start=${encodeURIComponent(view.start)}&end=${encodeURIComponent(view.end)}`;
  return `range=${encodeURIComponent(view.range)}`;
}

async function load() {
  document.body.dataset.ready = "0";
  for (const b of document.querySelectorAll("#ranges button")) {
    b.classList.toggle("on", !(view.start && view.end) && b.dataset.range === view.range);
  }
  const err = document.getElementById("error");
  try {
    const [list, now, ...series] = await Promise.all([getJSON("series_list"), getJSON("now")]
      .concat(NAMES.map((n) => getJSON(`series?name=${n}&${span()}`))));
    data = Object.fromEntries(NAMES.map((n, i) => [n, series[i]]));
    const s = data.slots_by_state;
    document.getElementById("span").textContent =
      `${new Date(s.start * 1000).toLocaleString()} – ${new Date(s.end * 1000).toLocaleString()}, ` +
      `one point per ${fmt(s.step)} s; sampled every ${fmt(list.interval)} s`;
    archOptions(list);
    renderNow(now);
    renderMachines();
    renderJobs();
    renderUsers();
    renderNegotiation();
    renderDuty();
    err.hidden = true;
  } catch (e) {
    err.textContent = String(e.message || e);
    err.hidden = false;
    document.body.dataset.error = err.textContent;
  }
  document.body.dataset.ready = "1";
}

function setQuery() {
  const q = new URLSearchParams();
  if (view.start && view.end) { q.set("start", view.start); q.set("end", view.end); }
  else if (view.range !== "day") q.set("range", view.range);
  if (view.count !== "slots") q.set("count", view.count);
  if (view.arch) q.set("arch", view.arch);
  if (view.user) q.set("user", view.user);
  history.replaceState(null, "", q.toString() ? "?" + q : location.pathname);
}

document.getElementById("ranges").addEventListener("click", (ev) => {
  const r = ev.target.dataset && ev.target.dataset.range;
  if (r) { view.range = r; view.start = view.end = null; setQuery(); load(); }
});
document.getElementById("count").addEventListener("change", (ev) => { view.count = ev.target.value; setQuery(); renderMachines(); });
document.getElementById("arch").addEventListener("change", (ev) => { view.arch = ev.target.value; setQuery(); renderMachines(); });
document.getElementById("user").addEventListener("change", (ev) => { view.user = ev.target.value; setQuery(); renderJobs(); });
load();
