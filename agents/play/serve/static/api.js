// The JSON API's one client, shared by the board page (app.js) and the text page (text.js):
// a request, its JSON answer, and an Error carrying the server's {"error": message}.
"use strict";

async function api(method, path, body) {
  const init = {method, headers: {}};
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let data;
  try { data = await res.json(); } catch (e) { data = {error: `HTTP ${res.status}`}; }
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}
