// Sorry! in the browser: draws the board from /api/layout, plays through the JSON API.
// Plain JavaScript, no build step and nothing loaded from the network.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const COLOURS = ["#d32f2f", "#1565c0", "#f9a825", "#2e7d32"];
const LIGHT = ["#f7c6c6", "#c5d8f5", "#fbeaa9", "#c8e6c9"];
const NAMES = ["Red", "Blue", "Yellow", "Green"];
// Where pawns sit inside a Start or Home circle (offsets from its centre, cell units).
const CIRCLE_SPOTS = [[-0.4, -0.4], [0.4, -0.4], [-0.4, 0.4], [0.4, 0.4]];

let layout = null;
let options = null;
let view = null;      // the game as the server last described it
let selected = [];    // cell keys clicked so far towards a move
let busy = false;     // a request or an animation is under way
let hintMove = null;

const $ = (id) => document.getElementById(id);

function setPhase(phase) { document.body.dataset.phase = phase; }

function status(text) { $("status").textContent = text; }

function el(name, attrs, parent, text) {
  const node = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- setup form ---------------------------------------------------------------------------
function preset() { return options.presets.find((p) => p.name === $("rules").value); }

function fillPlayers() {
  const keep = Number($("players").value);
  $("players").replaceChildren();
  for (const n of preset().players) {
    const o = new Option(String(n), String(n));
    $("players").add(o);
  }
  if (preset().players.includes(keep)) $("players").value = String(keep);
  fillSeats();
}

function seatsInPlay() { return preset().seats[$("players").value]; }

function fillSeats() {
  const keep = Number($("seat").value);
  $("seat").replaceChildren();
  for (const s of seatsInPlay()) $("seat").add(new Option(`${NAMES[s]} (seat ${s})`, String(s)));
  if (seatsInPlay().includes(keep)) $("seat").value = String(keep);
  fillOpponents();
}

function fillOpponents() {
  const seats = seatsInPlay();
  const me = Number($("seat").value);
  const others = [];
  for (let k = 1; k < seats.length; k++) others.push(seats[(seats.indexOf(me) + k) % seats.length]);
  const box = $("opponents");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.querySelectorAll("label, datalist").forEach((n) => n.remove());
  const list = document.createElement("datalist");
  list.id = "agent-specs";
  const players = Number($("players").value);
  for (const a of options.agents) list.appendChild(new Option(a, a));
  for (const p of options.policies) {
    if (p.rules !== $("rules").value || p.players !== players) continue;
    // A shipped policy is offered by its catalog name and as "trained" (the game's own policy).
    if (p.shipped) {
      list.appendChild(new Option(`${options.trained} (${p.shipped})`, options.trained));
      list.appendChild(new Option(p.shipped, p.shipped));
    } else {
      list.appendChild(new Option(p.spec, p.spec));
    }
  }
  box.appendChild(list);
  others.forEach((seat, k) => {
    const label = document.createElement("label");
    label.textContent = `${NAMES[seat]} `;
    const input = document.createElement("input");
    input.setAttribute("list", "agent-specs");
    input.name = `opponent-${k}`;
    input.id = `opponent-${k}`;
    input.value = old[k] || options.defaults.opponents[0];
    label.appendChild(input);
    box.appendChild(label);
  });
  const shipped = options.policies.filter((p) => p.rules === $("rules").value && p.players === players);
  box.title = shipped.length ? `shipped policies: ${shipped.map((p) => p.spec).join(", ")}` : "";
}

async function startGame(event) {
  event.preventDefault();
  $("setup-error").textContent = "";
  const body = {
    rules: $("rules").value,
    players: Number($("players").value),
    seat: Number($("seat").value),
    opponents: [...$("opponents").querySelectorAll("input")].map((i) => i.value.trim()),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  setPhase("busy");
  try {
    const data = await api("POST", "/api/games", body);
    history.replaceState(null, "", `?game=${data.game.id}&delay=${$("delay").value}`);
    showGame(data.game);
    await animate(data.events);
    setView(data.game);
  } catch (e) {
    $("setup-error").textContent = e.message;
    setPhase("setup");
  }
}

// ---- the board ----------------------------------------------------------------------------
function cellCentre(key) {
  const [kind, a, b] = key.split(":").map((x, i) => (i ? Number(x) : x));
  if (kind === "track") return [layout.track[a][0] + 0.5, layout.track[a][1] + 0.5];
  if (kind === "safe") return [layout.safe[a][b][0] + 0.5, layout.safe[a][b][1] + 0.5];
  if (kind === "start") return layout.start[a];
  if (kind === "home") return layout.home[a];
  return null;
}

function drawBoard(active) {
  const svg = $("board");
  svg.replaceChildren();
  const g = layout.grid;
  svg.setAttribute("viewBox", `0 0 ${g} ${g}`);
  el("rect", {x: 0, y: 0, width: g, height: g, class: "felt"}, svg);
  // The watermark is small enough to stay clear of the Home and Start counts either side of it.
  el("text", {x: g / 2, y: g / 2 + 0.3, class: "logo"}, svg, "SORRY!");
  const cells = el("g", {id: "cells"}, svg);
  layout.track.forEach(([c, r], sq) => {
    const start = layout.start_square.indexOf(sq);
    el("rect", {x: c + 0.04, y: r + 0.04, width: 0.92, height: 0.92, class: "cell track", "data-key": `track:${sq}`,
                ...(start >= 0 ? {stroke: COLOURS[start], "stroke-width": 0.1} : {})}, cells);
    el("text", {x: c + 0.08, y: r + 0.3, class: "sq"}, cells, String(sq));
  });
  const slides = el("g", {class: "slides"}, svg);
  for (const [seat, first, last] of layout.slides) {
    const [x1, y1] = cellCentre(`track:${first}`);
    const [x2, y2] = cellCentre(`track:${last}`);
    el("line", {x1, y1, x2, y2, stroke: COLOURS[seat], class: "slide"}, slides);
    el("circle", {cx: x2, cy: y2, r: 0.18, fill: COLOURS[seat], class: "slide-end"}, slides);
    const dx = Math.sign(x2 - x1) * 0.3, dy = Math.sign(y2 - y1) * 0.3;
    el("polygon", {points: `${x1 + dx},${y1 + dy} ${x1 - dx - dy},${y1 - dy + dx} ${x1 - dx + dy},${y1 - dy - dx}`,
                   fill: COLOURS[seat], class: "slide-end"}, slides);
  }
  for (let seat = 0; seat < 4; seat++) {
    const dim = active.includes(seat) ? "" : " inactive";
    layout.safe[seat].forEach(([c, r], k) => {
      el("rect", {x: c + 0.04, y: r + 0.04, width: 0.92, height: 0.92, fill: LIGHT[seat],
                  class: `cell safe${dim}`, "data-key": `safe:${seat}:${k}`}, cells);
    });
    for (const kind of ["start", "home"]) {
      const [cx, cy] = layout[kind][seat];
      el("circle", {cx, cy, r: layout.circle_radius, fill: LIGHT[seat], stroke: COLOURS[seat],
                    class: `cell ${kind}${dim}`, "data-key": `${kind}:${seat}`}, cells);
      // The count sits just outside the circle, towards the board's middle, its whole box clear
      // of the circle: the offset grows by the label's half-size along that direction.
      const dx = g / 2 - cx, dy = g / 2 - cy, len = Math.hypot(dx, dy) || 1;
      const halfWidth = 0.8, halfHeight = 0.2;  // of a "Home: 0" label at .count's font size, in cells
      const off = layout.circle_radius + 0.15 + Math.abs(dx / len) * halfWidth + Math.abs(dy / len) * halfHeight;
      el("text", {x: cx + (dx / len) * off, y: cy + (dy / len) * off + 0.15, class: "count",
                  id: `${kind}-count-${seat}`}, svg, "");
    }
  }
  el("g", {id: "pawns"}, svg);
}

function positionKey(seat, pos) {
  return pos[0] === "track" ? `track:${pos[1]}` : pos[0] === "safe" ? `safe:${seat}:${pos[1]}` : `${pos[0]}:${seat}`;
}

function drawPawns(state, labels) {
  const layer = $("pawns");
  layer.replaceChildren();
  state.pawns.forEach((pawns, seat) => {
    if (!pawns) return;
    const inCircle = {start: 0, home: 0};
    pawns.forEach((pos, slot) => {
      const key = positionKey(seat, pos);
      let [x, y] = cellCentre(key);
      let r = 0.36;
      if (pos[0] === "start" || pos[0] === "home") {
        const [dx, dy] = CIRCLE_SPOTS[inCircle[pos[0]]++ % 4];
        x += dx; y += dy; r = 0.3;
      }
      const g = el("g", {class: "pawn", "data-seat": seat, "data-slot": slot, "data-pos": pos.join(":"),
                         "data-key": key}, layer);
      el("circle", {cx: x.toFixed(3), cy: y.toFixed(3), r, fill: COLOURS[seat]}, g);
      el("text", {x: x.toFixed(3), y: (y + 0.11).toFixed(3), class: "pawn-label"}, g, labels[seat][slot]);
    });
    for (const kind of ["start", "home"]) {
      const n = pawns.filter((p) => p[0] === kind).length;
      $(`${kind}-count-${seat}`).textContent = `${kind === "start" ? "Start" : "Home"}: ${n}`;
    }
  });
}

// ---- choosing a move by clicks -----------------------------------------------------------
function matching(keys) {
  return (view ? view.legal : []).filter((m) => keys.every((k, i) => m.clicks[i] === k));
}

function mark(keys, cls) {
  document.querySelectorAll(`.${cls}`).forEach((n) => n.classList.remove(cls));
  for (const key of keys) {
    document.querySelectorAll(`[data-key="${key}"]`).forEach((n) => n.classList.add(cls));
  }
}

// A faint copy of each pawn already moved in the selection, where it will land.
function drawGhosts() {
  document.querySelectorAll(".ghost").forEach((n) => n.remove());
  const cells = selected.filter((k) => !k.startsWith("card:"));
  for (let i = 0; i + 1 < cells.length; i += 2) {
    const pawn = document.querySelector(`#pawns [data-key="${cells[i]}"]`);
    const at = cellCentre(cells[i + 1]);
    if (!pawn || !at || cells[i + 1].startsWith("start:")) continue;
    el("circle", {cx: at[0], cy: at[1], r: 0.3, fill: COLOURS[Number(pawn.dataset.seat)], class: "ghost"}, $("pawns"));
  }
}

function refreshSelection() {
  drawGhosts();
  const cands = matching(selected);
  const next = new Set(cands.filter((m) => m.clicks.length > selected.length).map((m) => m.clicks[selected.length]));
  mark([...next], "hl");
  mark(selected, "sel");
  $("pass").hidden = !next.has("pass");
  document.querySelectorAll("#hand button").forEach((b) => { b.disabled = !next.has(b.dataset.key); });
  const prompts = ["Click a highlighted pawn (or pick a move from the list).", "Click where it goes.",
                   "Split seven: click the second pawn.", "Split seven: click where the second pawn goes."];
  let prompt = selected.length < prompts.length ? prompts[selected.length] : "Click a highlighted cell.";
  if (view && view.state.hands) {
    prompt = selected.length ? "Click a highlighted pawn or target." : "Choose a card from your hand.";
    const chosen = selected.find((k) => k.startsWith("card:"));
    $("card").textContent = chosen ? chosen.slice(5) : "–";  // with hands, the card is the one you chose
  }
  const cells = selected.filter((k) => !k.startsWith("card:")).length;
  if (cells === 1 && cands.some((m) => m.kind === "swap" || m.kind === "sorry")) {
    prompt = cands.every((m) => m.kind === "sorry") ? "Click the pawn your Sorry! sends back to Start."
      : "Click the pawn to swap with, or where your pawn goes.";
  }
  $("prompt").textContent = view && view.legal.length ? prompt : "";
}

function clearSelection() {
  selected = [];
  $("choices").replaceChildren();
  refreshSelection();
}

function onKey(key) {
  if (busy || !view || view.over || !view.legal.length) return;
  let keys = selected.concat([key]);
  if (!matching(keys).length) {
    keys = [key];  // not a continuation: start again from this click if it starts a move
    if (!matching(keys).length) {
      $("game-error").textContent = "That is not one of your moves: click a highlighted place.";
      clearSelection();
      return;
    }
  }
  $("game-error").textContent = "";
  selected = keys;
  $("choices").replaceChildren();
  const cands = matching(selected);
  const done = cands.filter((m) => m.clicks.length === selected.length);
  const more = cands.filter((m) => m.clicks.length > selected.length);
  if (done.length === 1 && !more.length) return submit(done[0]);
  if (done.length) showChoices(done);  // the same clicks make different moves: ask which
  refreshSelection();
}

function showChoices(moves) {
  const box = $("choices");
  box.replaceChildren(document.createTextNode("Which move? "));
  for (const m of moves) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "choice";
    b.dataset.action = m.action;
    b.textContent = m.description;
    b.addEventListener("click", () => submit(m));
    box.appendChild(b);
  }
}

async function submit(move) {
  if (busy) return;
  busy = true;
  setPhase("busy");
  $("choices").replaceChildren();
  mark([], "hl");
  mark([], "hint");
  $("hint-text").textContent = "";
  try {
    const data = await api("POST", `/api/games/${view.id}/move`, {action: move.action, version: view.version});
    await animate(data.events);
    setView(data.game);
  } catch (e) {
    $("game-error").textContent = e.message;
    busy = false;
    try { setView((await api("GET", `/api/games/${view.id}`)).game); } catch (e2) { setPhase("error"); }
  }
}

async function askHint() {
  if (busy || !view || !view.legal.length) return;
  $("hint-text").textContent = "thinking…";
  try {
    const data = await api("GET", `/api/games/${view.id}/hint`);
    hintMove = data.hint;
    $("hint-text").textContent = `${data.hint.agent} suggests: ${data.hint.description}`;
    mark(data.hint.clicks, "hint");
  } catch (e) {
    $("hint-text").textContent = e.message;
  }
}

// ---- showing the game ---------------------------------------------------------------------
function logLine(event) {
  const li = document.createElement("li");
  li.className = `seat-${event.seat}`;
  li.textContent = event.text;
  const log = $("log");
  log.appendChild(li);
  log.scrollTop = log.scrollHeight;
  return li.textContent;
}

async function animate(events) {
  const delay = Number($("delay").value);
  busy = true;
  for (const event of events) {
    drawPawns(event.state, event.labels);
    $("card").textContent = event.card || "–";
    const words = logLine(event);
    status(words);
    mark(event.clicks.filter((k) => !k.includes("card:") && k !== "pass"), "last");
    if (event.seat !== view.you && delay > 0) await sleep(delay);
  }
}

function showGame(v) {
  view = v;
  $("setup").hidden = true;
  $("game").hidden = false;
  drawBoard(v.seats.map((s) => s.seat));
  $("log").replaceChildren();
}

function setView(v) {
  view = v;
  busy = false;
  selected = [];
  hintMove = null;
  const st = v.state;
  drawPawns(st, v.labels);
  $("board").dataset.version = v.version;
  $("log").replaceChildren();
  v.log.forEach(logLine);
  const mover = st.to_move;
  const who = v.seats.find((s) => s.seat === mover);
  $("turn").textContent = v.over ? "Game over" : mover === v.you ? `Your turn (${NAMES[mover]})`
    : `${NAMES[mover]} (${who.player}) to play`;
  $("turn").dataset.seat = mover;
  $("card").textContent = st.card || "–";
  $("card").style.color = COLOURS[mover];
  const hand = $("hand");
  hand.replaceChildren();
  hand.hidden = !st.hands;
  if (st.hands) {
    hand.appendChild(document.createTextNode("Your hand: "));
    for (const [name, n] of Object.entries(st.hands[v.you] || {})) {
      for (const prefix of ["card", "discard"]) {
        if (prefix === "discard" && !v.legal.some((m) => m.clicks[0] === `discard:${name}`)) continue;
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.key = `${prefix}:${name}`;
        b.textContent = prefix === "card" ? `${name}${n > 1 ? ` ×${n}` : ""}` : `discard ${name}`;
        hand.appendChild(b);
      }
    }
  }
  const list = $("moves");
  list.replaceChildren();
  for (const m of v.legal) {
    if (m.listed === false) continue;  // the same position as an earlier move (still playable by clicks)
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "move";
    b.dataset.action = m.action;
    b.textContent = m.description;
    b.addEventListener("click", () => submit(m));
    b.addEventListener("mouseenter", () => mark(m.clicks, "preview"));
    b.addEventListener("mouseleave", () => mark([], "preview"));
    li.appendChild(b);
    list.appendChild(li);
  }
  const res = $("result");
  res.hidden = !v.result;
  if (v.result) {
    res.textContent = v.result.text;
    res.className = `banner ${v.result.you_win ? "win" : "lose"}`;
    status(v.result.text);
  } else if (v.legal.length) {
    status(st.fire_decision ? "Your move: click the fire pawn for its fire move, or Pass, before you draw."
      : `Your move: card ${st.card || "from your hand"}.`);
  }
  $("choices").replaceChildren();
  $("tokens").textContent = v.tokens || "";  // Fire and Ice: where the tokens are
  $("estimate").textContent = v.estimate
    ? `Your win chance (${v.estimate.agent}): ${Math.round(100 * v.estimate.win_chance)}%`
    : "";
  $("hint-text").textContent = "";
  mark([], "hint");
  refreshSelection();
  $("hint").disabled = !v.legal.length;
  setPhase(v.over ? "over" : v.legal.length ? "your-move" : "waiting");
}

// ---- start-up -----------------------------------------------------------------------------
async function init() {
  [layout, options] = await Promise.all([api("GET", "/api/layout"), api("GET", "/api/options")]);
  for (const p of options.presets) $("rules").add(new Option(p.name, p.name));
  $("rules").value = options.defaults.rules;
  $("players").value = String(options.defaults.players);
  fillPlayers();
  $("players").value = String(options.defaults.players);
  fillSeats();
  $("rules").addEventListener("change", fillPlayers);
  $("players").addEventListener("change", fillSeats);
  $("seat").addEventListener("change", fillOpponents);
  $("setup-form").addEventListener("submit", startGame);
  $("board").addEventListener("click", (e) => {
    const node = e.target.closest("[data-key]");
    if (node) onKey(node.dataset.key);
  });
  $("pass").addEventListener("click", () => onKey("pass"));
  $("hand").addEventListener("click", (e) => { if (e.target.dataset.key) onKey(e.target.dataset.key); });
  $("cancel").addEventListener("click", clearSelection);
  $("hint").addEventListener("click", askHint);
  $("new-game").addEventListener("click", () => {
    history.replaceState(null, "", location.pathname);
    view = null;
    $("game").hidden = true;
    $("setup").hidden = false;
    setPhase("setup");
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") clearSelection(); });
  const params = new URLSearchParams(location.search);
  if (params.has("delay")) {
    const ms = String(Math.max(0, Number(params.get("delay")) || 0));
    if (![...$("delay").options].some((o) => o.value === ms)) $("delay").add(new Option(`${ms} ms`, ms));
    $("delay").value = ms;
  }
  if (params.has("game")) {  // a reload goes back to the game
    try {
      const data = await api("GET", `/api/games/${encodeURIComponent(params.get("game"))}`);
      showGame(data.game);
      setView(data.game);
      return;
    } catch (e) {
      $("setup-error").textContent = e.message;
    }
  }
  setPhase("setup");
}

init().catch((e) => { $("setup-error").textContent = `could not load the game: ${e.message}`; setPhase("error"); });
