// Every registered game but the board game, as text, through the same JSON API ({"game": id}).
// Texts from the server are shown with textContent only. Plain JavaScript, no build step.
"use strict";

let options = null;
let view = null;
let busy = false;

const $ = (id) => document.getElementById(id);

function chosenGame() { return options.games.find((g) => g.id === $("game-id").value); }

function refill(select, values, chosen) {
  select.replaceChildren(...values.map((v) => new Option(String(v), String(v))));
  if (chosen !== undefined) select.value = String(chosen);
}

function fillGame() {
  const g = chosenGame();
  refill($("rules"), g.rules, g.rules[0]);
  refill($("players"), g.players, g.defaults.players);
  fillSeats();
}

function fillSeats() {
  const n = Number($("players").value);
  refill($("seat"), [...Array(n).keys()], 0);
  fillOpponents();
}

function fillOpponents() {
  const g = chosenGame(), n = Number($("players").value), seat = Number($("seat").value);
  const box = $("opponents");
  box.querySelectorAll("label").forEach((l) => l.remove());
  for (let k = 1; k < n; k++) {
    const label = document.createElement("label");
    label.textContent = `${g.seat_names[(seat + k) % n]} `;
    const select = document.createElement("select");
    refill(select, g.agents, g.defaults.opponents[0]);
    label.appendChild(select);
    box.appendChild(label);
  }
}

async function startGame(event) {
  event.preventDefault();
  const body = {
    game: $("game-id").value,
    rules: $("rules").value,
    players: Number($("players").value),
    seat: Number($("seat").value),
    opponents: [...$("opponents").querySelectorAll("select")].map((s) => s.value),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    const data = await api("POST", "/api/games", body);
    history.replaceState(null, "", `?game=${encodeURIComponent(data.game.id)}`);
    $("setup").hidden = true;
    $("game").hidden = false;
    $("log").replaceChildren();
    show(data.game);
  } catch (e) {
    $("setup-error").textContent = e.message;
  }
}

async function play(action) {
  if (busy) return;
  busy = true;
  $("game-error").textContent = "";
  try {
    show((await api("POST", `/api/games/${view.id}/move`, {action, version: view.version})).game);
  } catch (e) {
    $("game-error").textContent = e.message;
  }
  busy = false;
}

async function askHint() {
  try {
    const hint = (await api("GET", `/api/games/${view.id}/hint`)).hint;
    $("hint-text").textContent = `${hint.agent} suggests: ${hint.description}` + (hint.note ? ` (${hint.note})` : "");
  } catch (e) {
    $("game-error").textContent = e.message;
  }
}

function show(v) {
  view = v;
  $("status").textContent = `${v.long_name}, rules ${v.rules}: you are ${v.seats[v.you].name}`;
  $("position").textContent = v.text;
  $("hint-text").textContent = "";
  $("moves").replaceChildren(...v.legal.map((m) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.className = "move";
    button.textContent = m.description;
    button.addEventListener("click", () => play(m.action));
    li.appendChild(button);
    return li;
  }));
  $("log").replaceChildren(...v.log.map((entry) => {
    const li = document.createElement("li");
    li.textContent = entry.text;
    return li;
  }));
  $("result").hidden = !v.result;
  if (v.result) {
    $("result").textContent = v.result.text;
    $("result").className = `banner ${v.result.you_win ? "win" : "lose"}`;
  }
  $("hint").disabled = !v.legal.length;
  document.body.dataset.phase = v.over ? "over" : v.legal.length ? "your-move" : "waiting";
}

async function init() {
  options = await api("GET", "/api/options");
  if (!options.games.length) {
    $("setup-error").textContent = "this server has no other registered games";
    return;
  }
  refill($("game-id"), options.games.map((g) => g.id), options.games[0].id);
  [...$("game-id").options].forEach((o, k) => { o.textContent = options.games[k].long_name; });
  fillGame();
  $("game-id").addEventListener("change", fillGame);
  $("players").addEventListener("change", fillSeats);
  $("seat").addEventListener("change", fillOpponents);
  $("setup-form").addEventListener("submit", startGame);
  $("hint").addEventListener("click", askHint);
  $("new-game").addEventListener("click", () => {
    history.replaceState(null, "", location.pathname);
    $("game").hidden = true;
    $("setup").hidden = false;
    document.body.dataset.phase = "setup";
  });
  const params = new URLSearchParams(location.search);
  if (params.has("game")) {  // a reload goes back to the game
    try {
      show((await api("GET", `/api/games/${encodeURIComponent(params.get("game"))}`)).game);
      $("setup").hidden = true;
      $("game").hidden = false;
      return;
    } catch (e) {
      $("setup-error").textContent = e.message;
    }
  }
  document.body.dataset.phase = "setup";
}

init().catch((e) => { $("setup-error").textContent = `could not load the games: ${e.message}`; });
