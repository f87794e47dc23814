// Order-status demo page: follows one order over SSE, socket.io or long-poll, shows each
// status change and tracking update with its publish-to-receive latency. The client
// library (libs/client, bundled as /assets/order-status-client.js) does the connecting,
// resuming from the last seq after any disconnect (the "Drop connection" button, a server
// restart, a maximum stream age, an expired token), backoff and duplicate/gap accounting;
// this file only renders. Plain browser JavaScript: the service serves it as is.
'use strict';

(() => {
  /** The domain's names and labels: assets/order-domain.js, generated from libs/order-domain. */
  const DOMAIN = globalThis.orderDomain;
  /** The statuses an order moves forward through: the stepper. */
  const STEPS = DOMAIN.statusPath;
  /** Each event kind by the item it travels in (`{kind, [kind]: event}`). */
  const KINDS = new Map(DOMAIN.kinds.map((k) => [k.itemKind, k]));
  const label = (status) => DOMAIN.statusLabels[status] ?? status;
  const TOKEN_KEY = 'orderStatus.token';
  /** A dev-only endpoint that hands out a token, when the service offers one. */
  const DEV_TOKEN_PATH = '/v1/dev/token';
  const LONG_POLL_WAIT_S = 25;
  const MAX_BACKOFF_MS = 10_000;
  const MAX_TIMELINE_ITEMS = 300;

  const $ = (id) => document.getElementById(id);
  const ui = {
    form: $('controls'),
    order: $('order-id'),
    simOrders: $('sim-orders'),
    followSim: $('follow-sim'),
    token: $('token'),
    connect: $('connect'),
    drop: $('drop'),
    disconnect: $('disconnect'),
    state: $('conn-state'),
    orderLabel: $('order-label'),
    current: $('current-status'),
    stepper: $('stepper'),
    timeline: $('timeline'),
    stats: {
      events: $('stat-events'),
      seq: $('stat-seq'),
      reconnects: $('stat-reconnects'),
      resumes: $('stat-resumes'),
      integrity: $('stat-integrity'),
      latency: $('stat-latency'),
    },
  };

  /** Per-subscription counters, fresh for every Connect. */
  const freshCounters = () => ({
    lastSeq: 0,
    events: 0,
    seqs: [],
    reconnects: 0,
    resumes: 0,
    resets: 0,
    lost: 0,
    duplicates: 0,
    latenciesMs: [],
    ends: [],
    connections: 0,
    connectStartedAtUs: 0,
  });

  /** Everything the page knows about the current subscription; tests read it too. */
  const state = { orderId: '', transport: 'sse', conn: 'idle', ...freshCounters() };
  window.orderStatusDemo = state;

  let session = null; // the running watch: { watch }

  // ---------- rendering ----------

  function setConn(conn) {
    state.conn = conn;
    ui.state.textContent = conn;
    ui.state.className = `pill pill-${conn}`;
    const running = session !== null;
    ui.connect.disabled = running;
    ui.drop.disabled = !running || conn !== 'live';
    ui.disconnect.disabled = !running;
    for (const r of ui.form.elements.transport) r.disabled = running;
    ui.order.disabled = running;
  }

  function renderStatus(status) {
    ui.current.textContent = status ? label(status) : '—';
    const idx = STEPS.indexOf(status);
    // A terminal status off the path (a cancellation) is shown after the first step.
    const endedEarly = idx < 0 && DOMAIN.terminalStatuses.includes(status);
    ui.stepper.replaceChildren(
      ...STEPS.map((s, i) => {
        const li = document.createElement('li');
        li.textContent = label(s);
        if (endedEarly) {
          if (i === 0) li.className = 'done';
          if (i === 1) {
            li.className = status;
            li.textContent = label(status);
          }
        } else if (idx >= 0 && i <= idx) {
          li.className = i === idx ? 'done current' : 'done';
        }
        return li;
      }),
    );
  }

  function percentile(sorted, p) {
    if (sorted.length === 0) return NaN;
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  }

  function renderStats() {
    const s = ui.stats;
    s.events.textContent = String(state.events);
    s.seq.textContent = String(state.lastSeq);
    s.reconnects.textContent = String(state.reconnects);
    s.resumes.textContent = String(state.resumes);
    s.integrity.textContent = `${state.lost} / ${state.duplicates}`;
    const sorted = [...state.latenciesMs].sort((a, b) => a - b);
    s.latency.textContent = sorted.length
      ? `${fmtMs(percentile(sorted, 50))} · ${fmtMs(percentile(sorted, 95))}`
      : '–';
  }

  function fmtMs(ms) {
    return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
  }

  function clock() {
    return new Date().toLocaleTimeString([], { hour12: false });
  }

  function addRow(li) {
    const first = ui.timeline.firstElementChild;
    if (first && first.classList.contains('empty')) first.remove();
    ui.timeline.prepend(li);
    while (ui.timeline.children.length > MAX_TIMELINE_ITEMS) ui.timeline.lastElementChild.remove();
  }

  function cell(cls, text) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = text;
    return span;
  }

  function note(kind, text) {
    const li = document.createElement('li');
    li.className = `note ${kind}`;
    li.dataset.kind = kind;
    li.append(cell('seq', kind), cell('text', text), cell('time', clock()));
    addRow(li);
  }

  // ---------- the stream: one library for every transport ----------

  function nowUs() {
    return (performance.timeOrigin + performance.now()) * 1000;
  }

  /** The page's transport names (kept for old links) and the library's. */
  const TRANSPORTS = { sse: 'sse', ws: 'ws', websocket: 'websocket', 'long-poll': 'longpoll' };

  function fmtPlace(t) {
    const { lat, lon } = t.location;
    const eta = new Date(t.etaMs).toLocaleTimeString([], { hour12: false });
    return `${lat.toFixed(4)}, ${lon.toFixed(4)} · ETA ${eta}`;
  }

  /**
   * An event of one of the domain's kinds (a status change or a tracking update): both
   * carry a seq, a status and a publish time.
   */
  function onEvent(e, kind) {
    state.lastSeq = e.seq;
    state.events++;
    state.seqs.push(e.seq);
    // An event published before this connection was asked for is a replay: its age is
    // how long we were away, not delivery latency, so it stays out of the percentiles.
    const replayed = e.publishedAtUs < state.connectStartedAtUs;
    const latencyMs = Math.max(0, (nowUs() - e.publishedAtUs) / 1000);
    if (!replayed) {
      state.latenciesMs.push(latencyMs);
      if (state.latenciesMs.length > 1000) state.latenciesMs.shift();
    }

    const li = document.createElement('li');
    li.dataset.kind = kind.itemKind;
    li.dataset.seq = String(e.seq);
    const what = document.createElement('span');
    if (e.location) {
      // A tracking update: where the parcel is, not a new status.
      what.append(cell(`badge ${kind.wireName}`, kind.wireName), ' ', cell('place', fmtPlace(e)));
    } else {
      what.append(cell(`badge ${e.status}`, label(e.status)));
      if (e.reason) what.append(' ', cell('reason', e.reason));
    }
    li.append(
      cell('seq', `#${e.seq}`),
      what,
      cell('latency', replayed ? 'replayed' : fmtMs(latencyMs)),
      cell('time', clock()),
    );
    addRow(li);
    renderStatus(e.status);
  }

  /** One item of the watch, in order. */
  function onItem(item) {
    syncStats();
    switch (item.kind) {
      case 'reset': {
        // The resume point could not be served without a gap: the snapshot replaces our view.
        const { reason, snapshot } = item.reset;
        state.resets++;
        state.lastSeq = snapshot.lastSeq;
        note(
          'reset',
          `reset (${reason}): now at seq ${snapshot.lastSeq}, ${label(snapshot.status)}`,
        );
        renderStatus(snapshot.status);
        break;
      }
      case 'skipped': {
        // Not an error: this page read too slowly and the service dropped these events for
        // it (its queue's overflow policy), and said so. They do not count as lost.
        const s = item.skipped;
        state.lastSeq = s.toSeq;
        note('skipped', `skipped #${s.fromSeq}..#${s.toSeq} (${s.reason}): read too slowly`);
        break;
      }
      case 'gap':
        // Seqs nobody accounted for: the library reports them rather than hiding them.
        note('error', `lost #${item.fromSeq}..#${item.toSeq}`);
        break;
      case 'end':
        onEnd(item);
        break;
      default: {
        // An event, under its kind's item name; a kind this page does not know yet (a
        // newer service) is ignored.
        const kind = KINDS.get(item.kind);
        if (kind) onEvent(item[item.kind], kind);
        break;
      }
    }
    syncStats();
    renderStats();
  }

  function onEnd(end) {
    state.ends.push(end.reason);
    if (end.reason === 'completed') {
      note('end', 'order finished: stream completed');
      stop('completed');
    } else if (end.reason === 'error') {
      note('error', `${end.error.code}: ${end.error.message}`);
      stop('error');
    }
  }

  /** The library's counters, copied where the page (and its tests) read them. */
  function syncStats() {
    const stats = session?.watch.stats;
    if (!stats) return;
    state.reconnects = stats.reconnects;
    state.resumes = stats.resumes;
    state.lost = stats.lost;
    state.duplicates = stats.duplicates;
  }

  /** How the connection is doing: the pill and the timeline notes. */
  function onConnection(e) {
    switch (e.type) {
      case 'connecting':
        state.connectStartedAtUs = e.atUs;
        setConn(state.connections === 0 ? 'connecting' : 'reconnecting');
        break;
      case 'open':
        state.connections++;
        if (e.reconnect) {
          note('resume', e.afterSeq > 0 ? `resumed after seq ${e.afterSeq}` : 'reconnected');
        }
        setConn('live');
        break;
      case 'retrying': {
        // The stream's own end reasons (max_age, shutdown, ...) are what the tests read.
        if (/^[a-z_]+$/.test(e.reason) && e.reason !== 'forced') state.ends.push(e.reason);
        // A transport that resumes by itself (EventSource) marks its reopen here.
        state.connectStartedAtUs = nowUs();
        const wait = e.delayMs > 0 ? `, reconnecting in ${Math.round(e.delayMs)} ms` : '';
        const advice = e.advisedMs !== undefined ? ' (server advice)' : '';
        if (e.reason !== 'forced') note('end', `connection ended (${e.reason})${wait}${advice}`);
        setConn('reconnecting');
        break;
      }
      case 'paused':
        if (e.reason === 'backpressure') {
          // The page fell behind its own buffer: the watch resumes once it has caught up.
          note('info', 'paused: catching up with buffered events');
          setConn('reconnecting');
        } else {
          note('info', 'offline: waiting for the network');
          setConn('offline');
        }
        break;
      case 'token':
        note(
          'info',
          e.reason === 'renewed'
            ? 'stream moved to the new token'
            : `asking for a new token (${e.reason})`,
        );
        break;
    }
    syncStats();
    renderStats();
  }

  /** A fresh token: the dev endpoint's when there is one, else what is in the field. */
  async function getToken() {
    try {
      const res = await fetch(DEV_TOKEN_PATH);
      if (res.ok) {
        const { token } = await res.json();
        if (typeof token === 'string') {
          ui.token.value = token;
          return token;
        }
      }
    } catch {
      // No dev token endpoint: the field's token is all there is.
    }
    return ui.token.value.trim();
  }

  function authHeaders() {
    const token = ui.token.value.trim();
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  // ---------- controls ----------

  function start() {
    const orderId = ui.order.value.trim();
    if (!orderId || session) return;
    const transport = ui.form.elements.transport.value;
    Object.assign(state, { orderId, transport, ...freshCounters() });
    ui.timeline.replaceChildren();
    ui.orderLabel.textContent = orderId;
    renderStatus(undefined);
    renderStats();
    const params = new URLSearchParams(location.search);
    params.set('order', orderId);
    params.set('transport', transport);
    history.replaceState(null, '', `?${params}`);
    note('info', `following ${orderId} over ${transport}`);
    const token = ui.token.value.trim();
    const watch = window.OrderStatusClient.watchOrder(orderId, {
      transport: TRANSPORTS[transport],
      baseUrl: location.origin,
      ...(token ? { token, getToken } : {}),
      longPollWaitS: LONG_POLL_WAIT_S,
      backoff: { maxMs: MAX_BACKOFF_MS },
      onConnection,
    });
    session = { watch };
    setConn('connecting');
    (async () => {
      for await (const item of watch) onItem(item);
    })();
  }

  function stop(conn = 'idle') {
    const s = session;
    session = null;
    s?.watch.close();
    setConn(conn);
  }

  async function loadSimulatorOrders() {
    try {
      const res = await fetch('/v1/admin/simulator', { headers: authHeaders() });
      if (!res.ok) throw new Error(String(res.status));
      const { activeOrderIds } = await res.json();
      ui.simOrders.replaceChildren(
        ...activeOrderIds
          .slice(0, 50)
          .map((id) => Object.assign(document.createElement('option'), { value: id })),
      );
      return activeOrderIds;
    } catch {
      ui.followSim.hidden = true; // admin routes disabled or not allowed
      return [];
    }
  }

  async function loadToken() {
    const saved = localStorage.getItem(TOKEN_KEY);
    if (saved) {
      ui.token.value = saved;
      return;
    }
    try {
      const res = await fetch(DEV_TOKEN_PATH);
      if (res.ok) {
        const { token } = await res.json();
        if (typeof token === 'string') ui.token.value = token;
      }
    } catch {
      // No dev token endpoint: fine while auth is off.
    }
  }

  ui.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    start();
  });
  ui.disconnect.addEventListener('click', () => {
    note('info', 'stopped');
    stop();
  });
  ui.drop.addEventListener('click', () => {
    if (!session) return;
    note('drop', `connection dropped at seq ${state.lastSeq}`);
    setConn('reconnecting');
    // The library drops the connection and resumes at once from its cursor.
    session.watch.reconnect();
  });
  ui.token.addEventListener('change', () => {
    const token = ui.token.value.trim();
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  });
  ui.followSim.addEventListener('click', async () => {
    const ids = await loadSimulatorOrders();
    if (ids.length > 0 && !session) ui.order.value = ids[Math.floor(Math.random() * ids.length)];
  });

  (async () => {
    const params = new URLSearchParams(location.search);
    const transport = params.get('transport');
    if (transport && TRANSPORTS[transport]) ui.form.elements.transport.value = transport;
    if (params.get('order')) ui.order.value = params.get('order');
    renderStatus(undefined);
    setConn('idle');
    await loadToken();
    const ids = await loadSimulatorOrders();
    if (!ui.order.value && ids.length > 0) ui.order.value = ids[0];
    if (params.get('autostart') === '1') start();
  })();
})();
