"""The browser game in a real headless browser: Playwright drives the system's Chromium
against a sorry-serve server on 127.0.0.1, plays a whole game against the heuristic by
clicking on the board, and checks after every move that the drawn board is the server's.

Without /usr/bin/chromium the test is skipped, except under CI (CI=true), where a missing
browser is a failure: CI installs it (apt-get install chromium). Screenshots of a failure
are saved in the test's tmp folder (its path is in the failure message)."""

import contextlib
import json
import os
import random
import socket
import threading
import time
import urllib.request
import warnings

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SEED = 11  # hasbro2003_fast, 2 players: a game of a few dozen moves for the person


try:
    import uvicorn
    from playwright.sync_api import sync_playwright

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sorry_env.agents.play.serve.app import create_app
        from sorry_env.agents.play.serve.games import GameStore
    MISSING = None if os.path.exists(CHROMIUM) else f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
except ImportError as exc:
    MISSING = f"the test extra is not installed ({exc}): pip install -e '.[test]'"


@pytest.fixture(scope="module", autouse=True)
def browser_available():
    """Skip without the browser or the test extra; under CI (CI set) fail instead: CI installs them."""
    if MISSING and os.environ.get("CI"):
        pytest.fail(f"{MISSING}; CI must install it")
    if MISSING:
        pytest.skip(MISSING)


@pytest.fixture(scope="module")
def server():
    """sorry-serve's app under uvicorn on a free loopback port, in a thread; stopped after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(GameStore(ttl=600, max_games=8), hint_agent="heuristic")
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def page(tmp_path):
    """A Chromium page; a test that fails inside ``with shots(page):`` leaves a screenshot."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # bypass_csp: Playwright's wait_for_function evaluates its predicate as a string, which the
        # server's Content-Security-Policy forbids; test_the_page_runs_under_its_csp checks the page
        # itself with the policy enforced.
        page = browser.new_page(viewport={"width": 1300, "height": 900}, bypass_csp=True)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.shot_path = tmp_path / "failure.png"
        try:
            yield page
        finally:
            browser.close()


@contextlib.contextmanager
def shots(page):
    """Save a full-page screenshot when the block fails, and name it in the failure."""
    try:
        yield
    except BaseException as exc:
        page.screenshot(path=str(page.shot_path), full_page=True)
        raise AssertionError(f"{exc!r}\nscreenshot of the failure: {page.shot_path}") from exc


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def drawn_board(page) -> dict:
    """What the page shows: every pawn's seat, slot, position and circle centre, the counts,
    the card, whose turn and the game version."""
    return page.evaluate("""() => ({
        pawns: [...document.querySelectorAll('#pawns .pawn')].map(g => ({
            seat: +g.dataset.seat, slot: +g.dataset.slot, pos: g.dataset.pos, key: g.dataset.key,
            label: g.querySelector('text').textContent,
            x: +g.querySelector('circle').getAttribute('cx'), y: +g.querySelector('circle').getAttribute('cy')})),
        counts: Object.fromEntries([...document.querySelectorAll('.count')].map(t => [t.id, t.textContent])),
        card: document.getElementById('card').textContent,
        turn: +document.getElementById('turn').dataset.seat,
        version: +document.getElementById('board').dataset.version,
        phase: document.body.dataset.phase,
        log: document.querySelectorAll('#log li').length,
    })""")


def check_board(page, view: dict, layout: dict) -> None:
    """The drawn board is the server's state dict: each pawn where the state puts it, with
    its label, and the Start/Home counts, the card and whose turn it is."""
    state = view["state"]
    shown = drawn_board(page)
    assert shown["version"] == view["version"]
    assert shown["card"] == (state["card"] or "–")
    assert shown["turn"] == state["to_move"]
    assert shown["log"] == len(view["log"])
    expected = []
    for seat, pawns in enumerate(state["pawns"]):
        for slot, pos in enumerate(pawns or []):
            expected.append((seat, slot, ":".join(str(p) for p in pos)))
    assert sorted((p["seat"], p["slot"], p["pos"]) for p in shown["pawns"]) == sorted(expected)
    assert all(p["label"] == view["labels"][p["seat"]][p["slot"]] for p in shown["pawns"])
    for p in shown["pawns"]:
        kind = p["pos"].split(":")
        if kind[0] == "track":
            col, row = layout["track"][int(kind[1])]
        elif kind[0] == "safe":
            col, row = layout["safe"][p["seat"]][int(kind[1])]
        else:
            cx, cy = layout[kind[0]][p["seat"]]  # inside the Start/Home circle
            assert abs(p["x"] - cx) < layout["circle_radius"] and abs(p["y"] - cy) < layout["circle_radius"]
            continue
        assert (p["x"], p["y"]) == (col + 0.5, row + 0.5), p
    for seat, pawns in enumerate(state["pawns"]):
        if pawns:
            assert shown["counts"][f"start-count-{seat}"] == f"Start: {sum(p == ['start'] for p in pawns)}"
            assert shown["counts"][f"home-count-{seat}"] == f"Home: {sum(p == ['home'] for p in pawns)}"


def click_key(page, key: str) -> None:
    """Click what a person clicks for one step of a move: a pawn (the one on top), a cell,
    the Pass button or a card of the hand."""
    if key == "pass":
        page.click("#pass")
    elif key.startswith(("card:", "discard:")):
        page.click(f'#hand button[data-key="{key}"]')
    elif page.locator(f'#pawns [data-key="{key}"]').count():
        page.locator(f'#pawns [data-key="{key}"]').first.click()
    else:
        page.click(f'#cells [data-key="{key}"]')


def check_told(page, view, events, delay):
    """The status line told each of the move's events in order (yours, then every opponent's),
    each opponent's move standing for `delay` ms before the next is shown."""
    texts = [e["text"] for e in events]
    shown = page.evaluate("window.shown")
    assert [t for _, t in shown if t in texts] == texts, (shown, texts)
    times = [ms for ms, t in shown if t in texts]
    for k in range(1, len(events)):
        if events[k - 1]["seat"] != view["you"]:
            assert times[k] - times[k - 1] >= 0.9 * delay, (texts, times)


def choose(view: dict, rng: random.Random) -> dict:
    """A move for the person: a random one, preferring the ones with more to click (split
    sevens, swaps, Sorry!) half the time, so the test clicks every kind of move."""
    legal = view["legal"]
    longest = max(len(m["clicks"]) for m in legal)
    if rng.random() < 0.5:
        return rng.choice([m for m in legal if len(m["clicks"]) == longest])
    return rng.choice(legal)


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_play_a_whole_game_by_clicking(server, page):
    with shots(page):
        moves, kinds, view = play(server, page, "hasbro2003_fast", 2, SEED)
        assert view["over"]
        assert page.text_content("#result") == view["result"]["text"]
        assert page.is_visible("#result")
        assert page.evaluate("document.body.dataset.phase") == "over"
        print(f"played {moves} moves by clicking; click counts used: {sorted(kinds)}; {view['result']['text']}")
        assert moves >= 10 and kinds >= {2}
        assert not page.errors, page.errors


@pytest.mark.parametrize("rules, players", [("hasbro2003_points", 3), ("hasbro2003_teams", 4)])
def test_hands_and_partners_by_clicking_with_moves_shown_one_by_one(server, page, rules, players):
    """A few moves of a game with hands (a card is clicked first) and of a partnership game
    (your partner's pawns are yours to move too), opponents' moves shown 0.2 s apart."""
    with shots(page):
        moves, _, view = play(server, page, rules, players, 3, max_moves=4, delay=200)
        assert moves == 4 or view["over"]
        page.reload()  # the address names the game: a reload goes back to it
        page.wait_for_selector("body[data-phase=your-move], body[data-phase=over]")
        check_board(page, view, get(f"{server}/api/layout"))
        assert not page.errors, page.errors


FIRE_SEED = 4  # a game in which the person is offered fire moves, and takes and declines them


def test_fire_and_ice_by_clicking(server, page):
    """Fire and Ice in the browser: fire moves are a click on the fire pawn and declining is
    Pass, token choices come after the pawn's clicks, and the token line follows the game."""
    with shots(page):
        chosen = []
        moves, _, view = play(server, page, "hasbro2013_fire_ice", 2, FIRE_SEED, max_moves=30, chosen=chosen)
        assert moves == 30 or view["over"]
        assert page.text_content("#tokens") == view["tokens"] and view["tokens"].startswith("Fire: ")
        assert not page.errors, page.errors
    kinds = {move["kind"] for move in chosen}
    print(f"{moves} moves clicked: {sorted(kinds)}")
    assert {"fire_move", "no_fire_move"} <= kinds  # both answers to a fire decision were clicked


def play(server, page, rules, players, seed, max_moves=None, delay=0, chosen=None):
    """Start a game against heuristics from the setup form and play it by clicks (to the
    end, or `max_moves` moves), checking the board after every move. (moves, set of click
    counts used, last view); the moves clicked are appended to `chosen` if given."""
    layout = get(f"{server}/api/layout")
    page.goto(f"{server}/?delay={delay}")
    page.wait_for_selector("body[data-phase=setup]")
    page.select_option("#rules", rules)
    page.select_option("#players", str(players))
    for k in range(players - 1):
        page.fill(f"#opponent-{k}", "heuristic")
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_selector("body[data-phase=your-move], body[data-phase=over]")
    game_id = page.evaluate("new URLSearchParams(location.search).get('game')")
    # Every text the status line shows, with its time: the moves must be told one by one.
    page.evaluate("""() => { window.shown = []; new MutationObserver(records => records.forEach(r =>
        r.addedNodes.forEach(n => window.shown.push([performance.now(), n.textContent]))))
        .observe(document.getElementById('status'), {childList: true}); }""")
    rng = random.Random(seed)
    kinds = set()
    moves = 0
    told = 0
    while True:
        view = get(f"{server}/api/games/{game_id}")["game"]
        check_board(page, view, layout)
        if moves:
            check_told(page, view, view["log"][told:], delay)
        told = len(view["log"])
        if view["over"] or moves == max_moves:
            return moves, kinds, view
        assert page.evaluate("document.body.dataset.phase") == "your-move"
        page.evaluate("window.shown = []")
        if moves % 15 == 0:  # the hint: the heuristic's move, marked on the board
            page.click("#hint")
            page.wait_for_function("document.getElementById('hint-text').textContent.includes('suggests')")
            hinted = page.text_content("#hint-text").split("suggests: ", 1)[1]
            assert hinted in [m["description"] for m in view["legal"]]
        if moves == 0:  # a click that starts no move is answered on the page, and nothing is sent
            firsts = {m["clicks"][0] for m in view["legal"]}
            idle = next(f"track:{sq}" for sq in range(60) if f"track:{sq}" not in firsts)
            click_key(page, idle)
            assert "not one of your moves" in page.text_content("#game-error")
            assert get(f"{server}/api/games/{game_id}")["game"]["version"] == view["version"]
        move = choose(view, rng)
        if chosen is not None:
            chosen.append(move)
        for key in move["clicks"]:
            if key.startswith(("track:", "safe:", "start:", "home:")):
                # the next click is highlighted before it is made
                assert page.locator(f'#board [data-key="{key}"].hl').count(), (key, move)
            click_key(page, key)
        if page.locator("#choices button").count():  # the same clicks make two moves: pick by words
            page.click(f'#choices button[data-action="{move["action"]}"]')
        page.wait_for_function(
            f"+document.getElementById('board').dataset.version > {view['version']}"
            " && ['your-move', 'over'].includes(document.body.dataset.phase)"
        )
        kinds.add(len(move["clicks"]))
        moves += 1
        assert moves < 400, "the game did not end"


def test_another_registered_game_is_played_as_text_by_clicking_its_moves(server, page):
    """The text page (/static/text.html, linked from the board page): a game of Sorry! Express
    against greedy, every move a click on the first listed move; the position shown is the
    server's text."""
    with shots(page):
        page.goto(server + "/")
        page.click("text=Other registered games")
        page.wait_for_selector("#game-id option", state="attached")
        page.select_option("#game-id", "express")
        page.select_option("#opponents select", "greedy")
        page.fill("#seed", "3")
        page.click("#start")
        page.wait_for_selector("#position:not(:empty)")
        game_id = page.evaluate("new URLSearchParams(location.search).get('game')")
        moves = 0
        while True:
            view = get(f"{server}/api/games/{game_id}")["game"]
            page.wait_for_function(f"document.getElementById('position').textContent === {json.dumps(view['text'])}")
            if view["over"]:
                break
            assert page.locator("#moves button").count() == len(view["legal"])
            page.locator("#moves button").first.click()
            deadline = time.monotonic() + 60
            while get(f"{server}/api/games/{game_id}")["game"]["version"] == view["version"]:
                assert time.monotonic() < deadline, "the click made no move"
                time.sleep(0.05)
            moves += 1
            assert moves < 500
        assert page.text_content("#result") == view["result"]["text"] and page.is_visible("#result")
        assert not page.errors, page.errors


def test_the_page_runs_under_its_csp(server):
    """The page's own scripts, styles and requests keep within the server's Content-Security-
    Policy: with it enforced, a new game starts and the board is drawn, with no violation."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            response = page.goto(server + "/")
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
            page.wait_for_selector("body[data-phase=setup]")
            page.fill("#opponent-0", "heuristic")
            page.click("#start")
            page.wait_for_selector("body[data-phase=your-move], body[data-phase=over]", timeout=60_000)
            assert page.evaluate("document.querySelectorAll('#board *').length") > 50
            assert not errors, errors
        finally:
            browser.close()
