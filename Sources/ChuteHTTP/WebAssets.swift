/// The web page's files, compiled into the binary as string literals: a static `chute` installed anywhere serves
/// them without a resource bundle beside it, and there is no build step (docs/decisions.md).
///
/// The script builds every element with `createElement` and puts text in with `textContent` (through `el` and
/// `append`); nothing that comes from the API (a file name, a message, a sidecar) ever goes through `innerHTML`.
enum WebAssets {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Chute</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/ui/app.css">
        <script src="/ui/app.js" defer></script>
        </head>
        <body data-view="loading">
        <header class="top">
          <div class="brand"><span class="logo" aria-hidden="true"></span><span>Chute</span>
            <span id="version" class="muted"></span></div>
          <div class="top-actions">
            <span id="live" class="live" data-live="off" title="Live updates">offline</span>
            <button id="pause" type="button" hidden>Pause intake</button>
            <button id="logout" type="button" class="quiet" hidden>Sign out</button>
          </div>
        </header>

        <section id="login" class="login" hidden>
          <form id="login-form">
            <h1>Sign in to Chute</h1>
            <p class="muted">This address needs the daemon's token (the file named by <code>settings.api.tokenFile</code>).</p>
            <label for="token">Token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required>
            <button type="submit">Sign in</button>
            <p id="login-error" class="error" role="alert"></p>
          </form>
        </section>

        <main id="app" hidden>
          <p id="notice" class="notice" role="status" hidden></p>
          <ul id="counts" class="counts" aria-label="Jobs by state"></ul>
          <p id="budget" class="budget" aria-label="Scheduler budget"></p>
          <ul id="agents" class="budget agents" aria-label="Agents sharing the store" hidden></ul>

          <section id="upload" class="panel upload" aria-labelledby="upload-title" hidden>
            <h2 id="upload-title">Upload</h2>
            <form id="upload-form" class="drop">
              <label for="upload-rule">Convert with</label>
              <select id="upload-rule"></select>
              <input id="upload-files" type="file" multiple aria-label="Files to convert">
              <span class="muted">or drop files here</span>
            </form>
            <ul id="uploads" class="uploads"></ul>
          </section>

          <section class="panel" aria-labelledby="running-title">
            <h2 id="running-title">Running</h2>
            <ul id="running" class="jobs"></ul>
            <p class="empty" data-empty-for="running">Nothing is converting.</p>
          </section>

          <section class="panel" aria-labelledby="queue-title">
            <h2 id="queue-title">Queue</h2>
            <ul id="queue" class="jobs"></ul>
            <p class="empty" data-empty-for="queue">The queue is empty.</p>
          </section>

          <section class="panel" aria-labelledby="failed-title">
            <div class="panel-head">
              <h2 id="failed-title">Failures</h2>
              <button id="retry-all" type="button" hidden>Retry all failed</button>
            </div>
            <ul id="failed" class="jobs"></ul>
            <p class="empty" data-empty-for="failed">No failed jobs.</p>
          </section>

          <section class="panel" aria-labelledby="history-title">
            <div class="panel-head">
              <h2 id="history-title">History</h2>
              <form id="filters" class="filters" role="search">
                <select id="filter-state" aria-label="State">
                  <option value="">Any state</option>
                  <option value="completed">Completed</option>
                  <option value="failed">Failed</option>
                  <option value="cancelled">Cancelled</option>
                  <option value="retried">Retried</option>
                </select>
                <select id="filter-rule" aria-label="Rule"><option value="">Any rule</option></select>
                <input id="filter-text" type="search" placeholder="File name contains…" aria-label="File name contains">
              </form>
            </div>
            <ul id="history" class="jobs history"></ul>
            <p class="empty" data-empty-for="history">No finished jobs match.</p>
            <button id="more" type="button" class="quiet" hidden>Show more</button>
          </section>
        </main>

        <dialog id="detail" aria-labelledby="detail-title">
          <div class="dialog-head">
            <h2 id="detail-title"></h2>
            <button id="detail-close" type="button" class="quiet" aria-label="Close">Close</button>
          </div>
          <div id="detail-body"></div>
        </dialog>

        <dialog id="confirm" aria-labelledby="confirm-title">
          <h2 id="confirm-title"></h2>
          <p id="confirm-text"></p>
          <div class="actions">
            <button id="confirm-no" type="button" class="quiet">Keep it</button>
            <button id="confirm-yes" type="button" class="danger">Cancel the job</button>
          </div>
        </dialog>
        </body>
        </html>

        """#

    static let css = #"""
        :root {
          --bg: #f4f5f7; --card: #ffffff; --text: #1d2330; --muted: #667085; --line: #e3e6eb;
          --accent: #2f6fde; --accent-soft: #e6efff; --ok: #1a7f4b; --ok-soft: #e3f5ea; --bad: #c23a2b;
          --bad-soft: #fdecea; --warn: #a66300; --warn-soft: #fff3dd; --idle: #5b6472; --idle-soft: #eef0f3;
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
          font-size: 15px; line-height: 1.4; color: var(--text); background: var(--bg);
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #14171c; --card: #1d2128; --text: #e6e8ec; --muted: #98a2b3; --line: #2c323c;
            --accent: #6c9cf0; --accent-soft: #1e2b45; --ok: #5cc48b; --ok-soft: #17301f; --bad: #f07a6c;
            --bad-soft: #3a1d1a; --warn: #f0b45c; --warn-soft: #3a2c14; --idle: #aab2bf; --idle-soft: #262b33;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; }
        [hidden] { display: none !important; }
        code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.86em; }
        button {
          font: inherit; border: 1px solid var(--accent); background: var(--accent); color: #fff;
          border-radius: 6px; padding: 0.3rem 0.75rem; cursor: pointer; white-space: nowrap;
        }
        button:hover { filter: brightness(1.08); }
        button:disabled { opacity: 0.5; cursor: default; }
        button.quiet { background: transparent; color: var(--accent); }
        button.danger { background: transparent; color: var(--bad); border-color: var(--bad); }
        input, select {
          font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line);
          border-radius: 6px; padding: 0.3rem 0.5rem; min-width: 0;
        }
        .muted { color: var(--muted); }
        .error { color: var(--bad); min-height: 1.2em; }

        .top {
          display: flex; align-items: center; justify-content: space-between; gap: 1rem; flex-wrap: wrap;
          padding: 0.7rem 1.25rem; background: var(--card); border-bottom: 1px solid var(--line);
          position: sticky; top: 0; z-index: 2;
        }
        .brand { display: flex; align-items: center; gap: 0.5rem; font-weight: 650; font-size: 1.15rem; }
        .brand .muted { font-weight: 400; font-size: 0.85rem; }
        .logo {
          width: 1.35rem; height: 1.35rem; border-radius: 5px;
          background: linear-gradient(160deg, var(--accent) 0 55%, #7fb0ff 55% 100%);
        }
        .top-actions { display: flex; align-items: center; gap: 0.6rem; }
        .live { font-size: 0.82rem; color: var(--muted); display: inline-flex; align-items: center; gap: 0.35rem; }
        .live::before { content: ""; width: 0.55rem; height: 0.55rem; border-radius: 50%; background: var(--idle); }
        .live[data-live="on"]::before { background: var(--ok); box-shadow: 0 0 0 3px var(--ok-soft); }
        #pause[data-paused="true"] { background: var(--warn); border-color: var(--warn); }

        main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
        .notice {
          background: var(--accent-soft); border-radius: 8px; padding: 0.55rem 0.8rem; margin: 0 0 1rem;
        }
        .notice[data-kind="error"] { background: var(--bad-soft); color: var(--bad); }
        .counts {
          list-style: none; padding: 0; margin: 0 0 1rem; display: grid; gap: 0.6rem;
          grid-template-columns: repeat(auto-fit, minmax(7.5rem, 1fr));
        }
        .counts li {
          background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 0.55rem 0.8rem;
        }
        .counts .n { display: block; font-size: 1.5rem; font-weight: 650; font-variant-numeric: tabular-nums; }
        .counts .label { color: var(--muted); font-size: 0.85rem; }
        .counts [data-state="failed"] .n { color: var(--bad); }
        .counts [data-state="running"] .n { color: var(--accent); }
        .counts [data-state="completed"] .n { color: var(--ok); }
        .budget { color: var(--muted); font-size: 0.9rem; margin: -0.4rem 0 1rem; }
        .agents { list-style: none; padding: 0; }

        .panel {
          background: var(--card); border: 1px solid var(--line); border-radius: 12px;
          padding: 0.9rem 1rem; margin-bottom: 1rem;
        }
        .panel h2 { font-size: 1.02rem; margin: 0 0 0.6rem; }
        .drop { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; border: 2px dashed var(--line, #8884);
          border-radius: 8px; padding: 0.8rem; }
        .drop.dragging { border-color: var(--accent, #3b82f6); }
        .uploads { list-style: none; padding: 0; margin: 0.5rem 0 0; }
        .uploads li { padding: 0.2rem 0; }
        .panel-head {
          display: flex; align-items: center; justify-content: space-between; gap: 0.75rem; flex-wrap: wrap;
          margin-bottom: 0.6rem;
        }
        .panel-head h2 { margin: 0; }
        .filters { display: flex; gap: 0.5rem; flex-wrap: wrap; }
        .filters input { width: 13rem; }
        .empty { color: var(--muted); margin: 0.2rem 0; font-size: 0.92rem; }
        .jobs { list-style: none; margin: 0; padding: 0; }
        .jobs:empty { display: none; }
        .job {
          display: grid; gap: 0.25rem 0.75rem; align-items: center; padding: 0.55rem 0;
          grid-template-columns: 6.5rem minmax(0, 1fr) auto; border-top: 1px solid var(--line);
        }
        .job:first-child { border-top: 0; }
        .job .file { min-width: 0; }
        .job .name {
          display: block; font-weight: 560; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
          background: none; border: 0; color: inherit; padding: 0; text-align: left; max-width: 100%;
        }
        .job .name:hover { color: var(--accent); text-decoration: underline; }
        .job .where { display: block; color: var(--muted); font-size: 0.82rem; overflow: hidden;
          text-overflow: ellipsis; white-space: nowrap; }
        .job .side { display: flex; align-items: center; gap: 0.6rem; color: var(--muted); font-size: 0.85rem;
          justify-content: flex-end; font-variant-numeric: tabular-nums; }
        .job .message {
          grid-column: 2 / -1; color: var(--bad); font-size: 0.88rem; overflow-wrap: anywhere;
          font-family: ui-monospace, "DejaVu Sans Mono", monospace;
        }
        .job .progress { grid-column: 2 / -1; display: flex; align-items: center; gap: 0.75rem; }
        .bar { flex: 1; height: 0.55rem; background: var(--idle-soft); border-radius: 99px; overflow: hidden; }
        .bar .fill { height: 100%; width: 0; background: var(--accent); border-radius: 99px;
          transition: width 0.4s ease; }
        .job .pct { font-size: 0.85rem; color: var(--muted); font-variant-numeric: tabular-nums; min-width: 9rem;
          text-align: right; }
        .badge {
          justify-self: start; font-size: 0.78rem; font-weight: 600; padding: 0.12rem 0.5rem; border-radius: 99px;
          background: var(--idle-soft); color: var(--idle); text-transform: capitalize;
        }
        .badge[data-state="completed"] { background: var(--ok-soft); color: var(--ok); }
        .badge[data-state="failed"] { background: var(--bad-soft); color: var(--bad); }
        .badge[data-state="running"] { background: var(--accent-soft); color: var(--accent); }
        .badge[data-state="queued"], .badge[data-state="waiting"], .badge[data-state="postponed"] {
          background: var(--warn-soft); color: var(--warn);
        }
        #more { margin-top: 0.6rem; }

        .login { max-width: 24rem; margin: 4rem auto; padding: 0 1rem; }
        .login form { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem;
          display: grid; gap: 0.6rem; }
        .login h1 { font-size: 1.25rem; margin: 0; }

        dialog {
          width: min(46rem, calc(100vw - 1.5rem)); max-height: calc(100vh - 2rem); border: 1px solid var(--line);
          border-radius: 12px; padding: 1rem 1.1rem; background: var(--card); color: var(--text);
        }
        dialog::backdrop { background: rgba(15, 20, 30, 0.45); }
        .dialog-head { display: flex; justify-content: space-between; align-items: center; gap: 1rem; }
        .dialog-head h2 { margin: 0; font-size: 1.1rem; overflow-wrap: anywhere; }
        .facts { display: grid; grid-template-columns: 8rem minmax(0, 1fr); gap: 0.3rem 0.8rem; margin: 0.9rem 0; }
        .facts dt { color: var(--muted); }
        .facts dd { margin: 0; overflow-wrap: anywhere; }
        .facts ul { margin: 0; padding-left: 1.1rem; }
        .actions { display: flex; gap: 0.5rem; margin: 0.5rem 0 0.8rem; }
        pre.sidecar {
          background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: 0.7rem;
          overflow: auto; max-height: 22rem; margin: 0;
        }

        @media (max-width: 640px) {
          .top { padding: 0.6rem 0.8rem; }
          main { padding: 0.75rem 0.6rem 2rem; }
          .panel { padding: 0.75rem; border-radius: 10px; }
          .counts { grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 0.4rem; }
          .counts .label { font-size: 0.75rem; }
          .counts li { padding: 0.4rem 0.55rem; }
          .counts .n { font-size: 1.2rem; }
          .job { grid-template-columns: minmax(0, 1fr) auto; }
          .job .badge { grid-column: 1 / -1; }
          .job .file { grid-column: 1; }
          .job .message, .job .progress { grid-column: 1 / -1; }
          .job .pct { min-width: 0; }
          .filters, .filters input, .filters select { width: 100%; }
          .facts { grid-template-columns: minmax(0, 1fr); }
          .facts dt { margin-top: 0.4rem; }
        }

        """#

    static let script = #"""
        'use strict';
        (() => {
          const PAGE_HEADER = { 'X-Chute-Page': '1' };
          const FINAL = ['completed', 'failed', 'postponed', 'cancelled', 'vanished'];
          const KINDS = ['queued', 'waiting', 'started', 'progress'].concat(FINAL);
          const COUNTED = ['waiting', 'queued', 'running', 'postponed', 'completed', 'failed', 'cancelled', 'retried'];
          const PAGE_SIZE = 50;

          const model = {
            session: { required: false, signedIn: false },
            paused: false,
            counts: {},
            budget: null,
            // The agents sharing the store and this daemon's name among them; null on the journal.
            agents: null,
            agent: null,
            running: new Map(),
            queued: new Map(),
            waiting: [],
            postponed: [],
            failed: [],
            history: [],
            historyLimit: PAGE_SIZE,
            historyMore: false,
            rules: [],
            touched: new Map(),
            serverOffset: 0,
            source: null,
          };

          const $ = (id) => document.getElementById(id);

          // Every element of the page is made here: attributes through setAttribute, text as text nodes.
          function el(tag, attributes, ...children) {
            const node = document.createElement(tag);
            for (const [key, value] of Object.entries(attributes || {})) {
              if (value === undefined || value === null || value === false) continue;
              if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
              else node.setAttribute(key, value === true ? '' : String(value));
            }
            for (const child of children.flat()) {
              if (child === undefined || child === null || child === false) continue;
              node.append(child instanceof Node ? child : String(child));
            }
            return node;
          }

          class ApiError extends Error {
            constructor(status, message) { super(message); this.status = status; }
          }

          async function api(path, method = 'GET', body = undefined) {
            const init = { method, headers: { ...PAGE_HEADER }, credentials: 'same-origin', cache: 'no-store' };
            if (body !== undefined) {
              init.body = JSON.stringify(body);
              init.headers['Content-Type'] = 'application/json';
            }
            const response = await fetch(path, init);
            const date = Date.parse(response.headers.get('Date') || '');
            if (!Number.isNaN(date)) model.serverOffset = date - Date.now();
            let json = null;
            try { json = await response.json(); } catch (_) { json = null; }
            if (response.status === 401 && path.startsWith('/api/')) {
              showLogin('Your session ended; sign in again.');
            }
            if (!response.ok) throw new ApiError(response.status, (json && json.error) || response.statusText);
            return json;
          }

          // ---- Formatting ----

          function baseName(path) { return String(path || '').split('/').pop(); }
          function folderOf(path) {
            const parts = String(path || '').split('/');
            parts.pop();
            return parts.join('/') || '/';
          }
          function duration(ms) {
            if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
            const seconds = ms / 1000;
            if (seconds < 10) return seconds.toFixed(1) + ' s';
            if (seconds < 60) return Math.round(seconds) + ' s';
            const minutes = Math.floor(seconds / 60);
            if (minutes < 60) return minutes + ' min ' + String(Math.round(seconds % 60)).padStart(2, '0') + ' s';
            return Math.floor(minutes / 60) + ' h ' + String(minutes % 60).padStart(2, '0') + ' min';
          }
          function bytes(size) {
            if (size === null || size === undefined) return 'gone';
            const units = ['B', 'KB', 'MB', 'GB', 'TB'];
            let value = size, unit = 0;
            while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
            return (unit === 0 ? String(value) : value.toFixed(value < 10 ? 2 : 1)) + ' ' + units[unit];
          }
          function when(iso) {
            if (!iso) return '';
            const date = new Date(iso);
            const sameDay = date.toDateString() === new Date().toDateString();
            return sameDay ? date.toLocaleTimeString() : date.toLocaleString();
          }
          function timeBetween(start, end) {
            if (!start || !end) return null;
            return Date.parse(end) - Date.parse(start);
          }

          // How long a running job still needs, from its progress and the server's clock: the time since it
          // started, at the moment of its latest progress, scaled by what is left.
          function remaining(job) {
            if (!job.startedAt || !(job.progress > 0.01) || job.progress >= 1) return null;
            const at = job.progressAt ? Date.parse(job.progressAt) : Date.now() + model.serverOffset;
            const elapsed = at - Date.parse(job.startedAt);
            if (!(elapsed > 0)) return null;
            return elapsed * (1 - job.progress) / job.progress;
          }

          // ---- Notices ----

          let noticeTimer = null;
          function notice(text, kind = 'info') {
            const node = $('notice');
            node.textContent = text;
            node.dataset.kind = kind;
            node.hidden = false;
            clearTimeout(noticeTimer);
            noticeTimer = setTimeout(() => { node.hidden = true; }, 6000);
          }
          function failure(error) { notice(error.message || String(error), 'error'); }

          // ---- Rows ----

          function fileCell(job) {
            return el('div', { class: 'file' },
              el('button', { type: 'button', class: 'name', title: job.source, onclick: () => openDetail(job.id) },
                baseName(job.source)),
              el('span', { class: 'where' }, folderOf(job.source), job.rule ? ' · ' + job.rule : ''));
          }

          function row(job, extra) {
            return el('li', { class: 'job', 'data-job-id': job.id || '', 'data-state': job.state,
                              'data-source': job.source },
              el('span', { class: 'badge', 'data-state': job.state }, job.state),
              fileCell(job),
              extra);
          }

          function runningRow(job) {
            const node = row(job, el('div', { class: 'side' },
              el('button', { type: 'button', class: 'danger cancel', onclick: () => cancel(job) }, 'Cancel')));
            const fill = el('div', { class: 'fill' });
            node.append(el('div', { class: 'progress' }, el('div', { class: 'bar' }, fill), el('span', { class: 'pct' })));
            updateProgress(node, job);
            return node;
          }

          function updateProgress(node, job) {
            const fill = node.querySelector('.fill');
            const label = node.querySelector('.pct');
            if (!fill || !label) return;
            const fraction = Math.max(0, Math.min(1, job.progress || 0));
            fill.style.width = (fraction * 100).toFixed(1) + '%';
            node.dataset.progress = fraction.toFixed(3);
            const left = remaining(job);
            const percent = job.progress === undefined || job.progress === null ? 'starting' : Math.floor(fraction * 100) + ' %';
            label.textContent = left === null ? percent : percent + ' · ' + duration(left) + ' left';
          }

          function queuedRow(job) {
            const side = el('div', { class: 'side' }, el('span', {}, when(job.queuedAt)));
            if (job.id) side.append(el('button', { type: 'button', class: 'quiet cancel', onclick: () => cancel(job) }, 'Remove'));
            const node = row(job, side);
            // A file not ready yet says why, and when it is taken anyway (incompleteTimeout) unless it changes; a
            // postponed job says why and when its file is tried again.
            const until = job.until ? 'taken at ' + when(job.until) + ' unless it changes' : '';
            const retry = job.state === 'postponed' && job.retryAt
              ? 'tried again at ' + new Date(job.retryAt).toLocaleTimeString() : '';
            if (job.message || until || retry) {
              node.append(el('div', { class: 'message' }, [job.message, until, retry].filter(Boolean).join('; ')));
            }
            return node;
          }

          // A quarantined source is no longer where the job found it: the row says where it is, and offers no Retry
          // (moving the file back into the watched folder takes it again).
          function failedRow(job) {
            const side = el('div', { class: 'side' }, el('span', {}, when(job.endedAt)));
            if (!job.quarantined) {
              side.append(el('button', { type: 'button', class: 'retry', onclick: (event) => retry(job, event.target) }, 'Retry'));
            }
            const node = row(job, side);
            node.append(el('div', { class: 'message' }, (job.code ? job.code + ': ' : '') + (job.message || 'failed')));
            if (job.quarantined) {
              node.append(el('div', { class: 'message quarantined' }, 'Moved to quarantine: ' + job.quarantined
                + ' (move it back into the watched folder to try again)'));
            }
            return node;
          }

          function historyRow(job) {
            const took = duration(timeBetween(job.startedAt, job.endedAt));
            const node = row(job, el('div', { class: 'side' },
              took ? el('span', { title: 'Duration' }, took) : null,
              el('span', {}, when(job.endedAt))));
            if (job.state !== 'completed' && job.message) node.append(el('div', { class: 'message' }, job.message));
            return node;
          }

          // ---- Rendering ----

          function fill(id, nodes) {
            $(id).replaceChildren(...nodes);
            const empty = document.querySelector('[data-empty-for="' + id + '"]');
            if (empty) empty.hidden = nodes.length > 0;
          }

          function renderCounts() {
            const counts = { ...model.counts, running: model.running.size, queued: model.queued.size,
                             postponed: model.postponed.length };
            fill('counts', COUNTED.map((state) =>
              el('li', { 'data-state': state }, el('span', { class: 'n' }, counts[state] || 0),
                 el('span', { class: 'label' }, state))));
            $('retry-all').hidden = !(model.failed.length > 0);
          }

          // `Budget: 1 of 2 cores, 244 MB of 1.00 GB in use; waiting for memory: film.mkv (needs 1.60 GB, 756 MB free)`,
          // as `chute status` says it.
          function renderBudget() {
            const budget = model.budget;
            if (!budget) { $('budget').textContent = ''; return; }
            const parts = ['Budget: ' + budget.cpuInUse + ' of ' + budget.cpu + ' cores, ' + bytes(budget.memoryInUse)
              + ' of ' + bytes(budget.memory) + ' in use'];
            for (const wait of budget.waiting) {
              const amount = (value) => wait.resource === 'cpu' ? value + ' cores' : bytes(value);
              const job = model.queued.get(wait.job);
              parts.push('waiting for ' + wait.resource + ': ' + (job ? baseName(job.source) : wait.job)
                + ' (needs ' + amount(wait.needed) + ', ' + amount(wait.free) + ' free)');
            }
            $('budget').textContent = parts.join('; ');
          }

          // `north (this one) on nas-1: alive, last heartbeat 3 s ago; holding 1, completed 101`, one line per agent, as
          // `chute status` says it.
          function renderAgents() {
            $('agents').hidden = !model.agents;
            const now = Date.now() + model.serverOffset;
            fill('agents', (model.agents || []).map((agent) => el('li', { 'data-agent': agent.name },
              agent.name + (agent.name === model.agent ? ' (this one)' : '') + ' on ' + agent.host + ': '
                + (agent.alive ? 'alive' : 'silent') + ', last heartbeat '
                + Math.max(0, Math.round((now - Date.parse(agent.heartbeat)) / 1000)) + ' s ago; holding '
                + agent.holding + ', completed ' + agent.completed)));
          }

          function renderLive() {
            const byStart = (a, b) => String(a.startedAt || '').localeCompare(String(b.startedAt || ''));
            fill('running', [...model.running.values()].sort(byStart).map(runningRow));
            const byQueue = (a, b) => String(a.queuedAt || '').localeCompare(String(b.queuedAt || ''));
            fill('queue', [...model.queued.values()].sort(byQueue).concat(model.postponed, model.waiting).map(queuedRow));
          }

          function renderFailed() { fill('failed', model.failed.map(failedRow)); }

          function renderHistory() {
            fill('history', model.history.map(historyRow));
            $('more').hidden = !model.historyMore;
          }

          function renderPause() {
            const button = $('pause');
            button.hidden = false;
            button.dataset.paused = String(model.paused);
            button.textContent = model.paused ? 'Resume intake' : 'Pause intake';
          }

          function renderAll() {
            renderCounts(); renderBudget(); renderAgents(); renderLive(); renderFailed(); renderHistory(); renderPause();
          }

          // ---- Loading ----

          function filters() {
            return { state: $('filter-state').value, rule: $('filter-rule').value, text: $('filter-text').value.trim() };
          }
          function matches(job) {
            const f = filters();
            return (!f.state || job.state === f.state) && (!f.rule || job.rule === f.rule)
              && (!f.text || String(job.source).includes(f.text));
          }

          // A list fetched from the API, merged with what events told since the fetch began: a job touched by an
          // event after `since` keeps the event's word.
          function merge(fetched, current, since, keep) {
            const fresh = (job) => (model.touched.get(job.id) || 0) > since;
            const result = fetched.filter((job) => !fresh(job));
            for (const job of current) if (fresh(job) && keep(job)) result.push(job);
            return result;
          }

          async function loadHistory() {
            const f = filters();
            const query = new URLSearchParams({ limit: String(model.historyLimit + 1) });
            query.set('state', f.state || 'finished');
            if (f.rule) query.set('rule', f.rule);
            if (f.text) query.set('text', f.text);
            const since = Date.now();
            const list = await api('/api/jobs?' + query.toString());
            model.historyMore = list.jobs.length > model.historyLimit;
            const merged = merge(list.jobs.slice(0, model.historyLimit), model.history, since, matches);
            merged.sort((a, b) => String(b.endedAt || '').localeCompare(String(a.endedAt || '')));
            model.history = merged;
            renderHistory();
          }

          async function refresh() {
            const since = Date.now();
            for (const [id, time] of model.touched) if (time < since - 60000) model.touched.delete(id);
            const [status, queued, waiting, failed, postponed] = await Promise.all([
              api('/api/status'),
              api('/api/jobs?state=queued&limit=200'),
              api('/api/jobs?state=waiting&limit=100'),
              api('/api/jobs?state=failed&limit=100'),
              api('/api/jobs?state=postponed&limit=100'),
            ]);
            model.paused = status.paused;
            model.counts = status.counts;
            model.budget = status.budget;
            model.agents = status.agents || null;
            model.agent = status.agent || null;
            const running = merge(status.running, [...model.running.values()], since, (job) => job.state === 'running');
            // The server's progress has no time; an event's (which has) is kept unless the server knows more.
            model.running = new Map(running.map((job) => {
              const old = model.running.get(job.id);
              return [job.id, old && (old.progress || 0) >= (job.progress || 0) ? old : job];
            }));
            const inQueue = merge(queued.jobs, [...model.queued.values()], since, (job) => job.state === 'queued');
            model.queued = new Map(inQueue.filter((job) => !model.running.has(job.id)).map((job) => [job.id, job]));
            model.waiting = waiting.jobs;
            model.postponed = postponed.jobs;
            model.failed = merge(failed.jobs, model.failed, since, (job) => job.state === 'failed');
            renderAll();
            await loadHistory();
          }

          // At most two reloads a second however fast jobs end, and never two at once.
          let refreshTimer = null;
          let refreshing = false;
          let refreshAgain = false;
          function refreshSoon() {
            if (refreshTimer) return;
            refreshTimer = setTimeout(async () => {
              refreshTimer = null;
              if (refreshing) { refreshAgain = true; return; }
              refreshing = true;
              try { await refresh(); } catch (error) { failure(error); } finally { refreshing = false; }
              if (refreshAgain) { refreshAgain = false; refreshSoon(); }
            }, 500);
          }

          // ---- Live events ----

          function onEvent(kind, event) {
            const id = event.jobID;
            if (!id) { if (kind === 'waiting') refreshSoon(); return; }
            model.touched.set(id, Date.now());
            if (kind === 'progress') {
              const job = model.running.get(id);
              if (!job) return;
              job.progress = event.progress;
              job.progressAt = event.time;
              const node = document.querySelector('#running [data-job-id="' + CSS.escape(id) + '"]');
              if (node) updateProgress(node, job);
              return;
            }
            if (kind === 'queued') {
              model.queued.set(id, { id, rule: event.rule, source: event.source, state: 'queued', queuedAt: event.time, outputs: [] });
            } else if (kind === 'started') {
              const job = model.queued.get(id) || { id, rule: event.rule, source: event.source, outputs: [] };
              model.queued.delete(id);
              model.running.set(id, { ...job, state: 'running', startedAt: event.time, progress: undefined });
              // The job now holds part of the budget.
              refreshSoon();
            } else if (FINAL.includes(kind)) {
              const before = model.running.get(id) || model.queued.get(id) || {};
              model.running.delete(id);
              model.queued.delete(id);
              const job = { ...before, id, rule: event.rule, source: event.source, state: kind,
                            outputs: event.outputs || [], message: event.message, code: event.code, endedAt: event.time };
              if (kind === 'completed') job.progress = 1;
              if (COUNTED.includes(kind)) model.counts[kind] = (model.counts[kind] || 0) + 1;
              if (kind === 'failed') {
                model.failed = [job].concat(model.failed.filter((other) => other.id !== id)).slice(0, 100);
              }
              if (matches(job)) {
                const others = model.history.filter((other) => other.id !== id);
                model.history = [job].concat(others).slice(0, model.historyLimit);
              }
              renderFailed();
              renderHistory();
              refreshSoon();
            }
            renderLive();
            renderCounts();
          }

          function connect() {
            if (model.source) model.source.close();
            const source = new EventSource('/api/events');
            model.source = source;
            source.onopen = () => {
              $('live').dataset.live = 'on';
              $('live').textContent = 'live';
              refresh().catch(failure);
            };
            source.onerror = () => {
              $('live').dataset.live = 'off';
              $('live').textContent = 'reconnecting…';
              if (source.readyState === EventSource.CLOSED) setTimeout(boot, 3000);
            };
            for (const kind of KINDS) {
              source.addEventListener(kind, (message) => {
                try { onEvent(kind, JSON.parse(message.data)); } catch (error) { failure(error); }
              });
            }
          }

          // ---- Actions ----

          async function act(button, work) {
            if (button) button.disabled = true;
            try { await work(); } catch (error) { failure(error); } finally { if (button) button.disabled = false; }
          }

          // Resolves to whether the user confirmed, in the page's own dialog (window.confirm would block the page). The
          // buttons' handlers are this question's own: a close event of an earlier one, still queued, cannot answer it.
          function ask(title, text) {
            const dialog = $('confirm');
            $('confirm-title').textContent = title;
            $('confirm-text').textContent = text;
            return new Promise((resolve) => {
              const answer = (value) => () => { dialog.close(); resolve(value); };
              $('confirm-yes').onclick = answer(true);
              $('confirm-no').onclick = answer(false);
              dialog.oncancel = () => resolve(false);
              dialog.showModal();
            });
          }

          function cancel(job) {
            return act(null, async () => {
              const running = job.state === 'running';
              const confirmed = await ask('Cancel ' + baseName(job.source) + '?',
                running ? 'Its conversion stops and writes nothing; the file stays where it is.'
                        : 'It leaves the queue; the file stays where it is.');
              if (!confirmed) return;
              const answer = await api('/api/jobs/' + encodeURIComponent(job.id) + '/cancel', 'POST');
              notice(baseName(job.source) + ': ' + answer.state);
              refreshSoon();
            });
          }

          function retry(job, button) {
            return act(button, async () => {
              await api('/api/jobs/' + encodeURIComponent(job.id) + '/retry', 'POST');
              model.touched.set(job.id, Date.now());
              model.failed = model.failed.filter((other) => other.id !== job.id);
              renderFailed();
              renderCounts();
              notice(baseName(job.source) + ' is queued again.');
              refreshSoon();
            });
          }

          function retryAll(event) {
            return act(event.target, async () => {
              const report = await api('/api/retry', 'POST');
              const skipped = Object.keys(report.skipped || {}).length;
              notice(report.retried.length + ' queued again' + (skipped ? ', ' + skipped + ' skipped' : '') + '.');
              for (const id of report.retried) model.touched.set(id, Date.now());
              model.failed = model.failed.filter((job) => !report.retried.includes(job.id));
              renderFailed();
              refreshSoon();
            });
          }

          function togglePause(event) {
            return act(event.target, async () => {
              const answer = await api(model.paused ? '/api/resume' : '/api/pause', 'POST');
              model.paused = answer.paused;
              renderPause();
              notice(answer.paused ? 'Intake paused: new files wait until you resume.' : 'Intake resumed.');
            });
          }

          // ---- Detail ----

          function fact(label, ...value) { return [el('dt', {}, label), el('dd', {}, ...value)]; }

          async function openDetail(id) {
            if (!id) return;
            const dialog = $('detail');
            let detail;
            try { detail = await api('/api/jobs/' + encodeURIComponent(id)); } catch (error) { failure(error); return; }
            const job = detail.job;
            const sidecar = detail.sidecar;
            $('detail-title').textContent = baseName(job.source);
            const facts = el('dl', { class: 'facts' },
              fact('State', el('span', { class: 'badge', 'data-state': job.state }, job.state)),
              fact('Job', el('code', {}, job.id)),
              fact('Rule', job.rule || ''),
              fact('Input', job.source, sidecar && sidecar.source ? ' (' + bytes(sidecar.source.size) + ')' : ''),
              fact('Outputs', detail.outputs.length === 0 ? 'none'
                : el('ul', {}, detail.outputs.map((output, index) => el('li', { class: 'output' }, output.path, ' (' + bytes(output.size) + ')',
                  job.state === 'completed' && output.size !== undefined && output.size !== null
                    ? [' ', el('a', { class: 'download', href: '/api/jobs/' + encodeURIComponent(job.id) + '/outputs/' + index, download: baseName(output.path) }, 'Download')]
                    : [])))),
              fact('Started', when(job.startedAt)),
              fact('Ended', when(job.endedAt)),
              fact('Duration', sidecar ? duration(sidecar.durationSeconds * 1000) : duration(timeBetween(job.startedAt, job.endedAt))),
              sidecar ? fact('Engine', sidecar.engine) : [],
              job.message ? fact('Message', el('span', { class: 'error' }, (job.code ? job.code + ': ' : '') + job.message)) : [],
              job.quarantined ? fact('Quarantine', job.quarantined) : [],
              job.until ? fact('Waits until', when(job.until)) : []);
            const actions = el('div', { class: 'actions' });
            if ((job.state === 'failed' && !job.quarantined) || job.state === 'cancelled') {
              actions.append(el('button', { type: 'button', class: 'retry', onclick: (event) => retry(job, event.target).then(() => dialog.close()) }, 'Retry'));
            }
            if (job.state === 'running' || job.state === 'queued') {
              actions.append(el('button', { type: 'button', class: 'danger cancel', onclick: () => cancel(job).then(() => dialog.close()) }, 'Cancel'));
            }
            const parts = [facts, actions];
            if (sidecar) {
              parts.push(el('h3', {}, 'Sidecar'), el('pre', { class: 'sidecar' }, JSON.stringify(sidecar, null, 2)));
            }
            $('detail-body').replaceChildren(...parts);
            if (!dialog.open) dialog.showModal();
          }

          // ---- Sign-in and start ----

          function showLogin(message) {
            if (model.source) { model.source.close(); model.source = null; }
            document.body.dataset.view = 'login';
            $('app').hidden = true;
            $('pause').hidden = true;
            $('logout').hidden = true;
            $('login').hidden = false;
            $('login-error').textContent = message || '';
            $('token').focus();
          }

          async function signIn(event) {
            event.preventDefault();
            try {
              await api('/ui/login', 'POST', { token: $('token').value });
              $('token').value = '';
              await boot();
            } catch (error) {
              $('login-error').textContent = error.status === 401 ? 'That is not the token.' : error.message;
            }
          }

          async function signOut() {
            try { await api('/ui/logout', 'POST'); } catch (error) { failure(error); }
            await boot();
          }

          // ---- Uploads ----

          // Each file goes up as the body of its own request (never read into the page), then shows its job.
          async function upload(files) {
            const rule = $('upload-rule').value;
            for (const file of files) {
              const line = el('li', {}, file.name + ': uploading…');
              $('uploads').prepend(line);
              try {
                const response = await fetch('/api/jobs?rule=' + encodeURIComponent(rule) + '&name=' + encodeURIComponent(file.name),
                  { method: 'PUT', headers: { ...PAGE_HEADER }, credentials: 'same-origin', body: file });
                let json = null;
                try { json = await response.json(); } catch (_) { json = null; }
                if (!response.ok) throw new ApiError(response.status, (json && json.error) || response.statusText);
                line.replaceChildren(file.name + ': job ',
                  el('a', { href: '#', class: 'upload-job', 'data-job-id': json.id, onclick: (event) => { event.preventDefault(); openDetail(json.id); } }, json.id),
                  ' (' + bytes(json.size) + ')');
                refreshSoon();
              } catch (error) {
                line.replaceChildren(el('span', { class: 'error' }, file.name + ': ' + error.message));
              }
            }
          }

          function onDrop(event) {
            event.preventDefault();
            $('upload-form').classList.remove('dragging');
            if (event.dataTransfer && event.dataTransfer.files.length > 0) upload(Array.from(event.dataTransfer.files));
          }

          async function loadRules() {
            const rules = await api('/api/rules');
            const takers = rules.filter((rule) => rule.upload);
            $('upload').hidden = takers.length === 0;
            const uploadRule = $('upload-rule');
            const uploadChosen = uploadRule.value;
            uploadRule.replaceChildren(...takers.map((rule) => el('option', { value: rule.name }, rule.name + ' → ' + rule.to)));
            if (takers.some((rule) => rule.name === uploadChosen)) uploadRule.value = uploadChosen;
            const select = $('filter-rule');
            const chosen = select.value;
            select.replaceChildren(el('option', { value: '' }, 'Any rule'),
              ...rules.map((rule) => el('option', { value: rule.name }, rule.name)));
            select.value = rules.some((rule) => rule.name === chosen) ? chosen : '';
          }

          async function boot() {
            let session;
            try {
              session = await api('/ui/session');
            } catch (error) {
              document.body.dataset.view = 'error';
              failure(error);
              setTimeout(boot, 5000);
              return;
            }
            model.session = session;
            if (session.required && !session.signedIn) { showLogin(); return; }
            $('login').hidden = true;
            $('app').hidden = false;
            $('logout').hidden = !session.signedIn;
            document.body.dataset.view = 'app';
            try {
              const health = await api('/api/health');
              $('version').textContent = health.version;
              await loadRules();
              await refresh();
            } catch (error) { failure(error); return; }
            connect();
          }

          let filterTimer = null;
          function onFilter() {
            clearTimeout(filterTimer);
            model.historyLimit = PAGE_SIZE;
            filterTimer = setTimeout(() => {
              model.history = [];
              loadHistory().catch(failure);
            }, 200);
          }

          document.addEventListener('DOMContentLoaded', () => {
            $('login-form').addEventListener('submit', signIn);
            $('logout').addEventListener('click', signOut);
            $('pause').addEventListener('click', togglePause);
            $('retry-all').addEventListener('click', retryAll);
            $('detail-close').addEventListener('click', () => $('detail').close());
            $('filters').addEventListener('submit', (event) => event.preventDefault());
            for (const id of ['filter-state', 'filter-rule', 'filter-text']) $(id).addEventListener('input', onFilter);
            $('more').addEventListener('click', () => { model.historyLimit += PAGE_SIZE; loadHistory().catch(failure); });
            $('upload-files').addEventListener('change', (event) => { upload(Array.from(event.target.files)); event.target.value = ''; });
            $('upload-form').addEventListener('submit', (event) => event.preventDefault());
            $('upload-form').addEventListener('dragover', (event) => { event.preventDefault(); $('upload-form').classList.add('dragging'); });
            $('upload-form').addEventListener('dragleave', () => $('upload-form').classList.remove('dragging'));
            $('upload-form').addEventListener('drop', onDrop);
            boot();
          });
        })();

        """#
}
