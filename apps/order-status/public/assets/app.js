// Order-status demo page: follows one order over SSE, socket.io or long-poll, shows each
// event with its publish-to-receive latency, and resumes from the last seq after any
// disconnect (the "Drop connection" button, a server restart, a maximum stream age).
// Plain browser JavaScript, no build step: the service serves this file as is.
'use strict';

(() => {
  const STEPS = ['created', 'paid', 'packed', 'shipped', 'out_for_delivery', 'delivered'];
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
    connectStartedAtUs: 0,
  });

  /** Everything the page knows about the current subscription; tests read it too. */
  const state = { orderId: '', transport: 'sse', conn: 'idle', ...freshCounters() };
  window.orderStatusDemo = state;

  let session = null; // the running transport client: { stop(), drop() }

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
    ui.current.textContent = status ? status.replaceAll('_', ' ') : '—';
    const idx = STEPS.indexOf(status);
    ui.stepper.replaceChildren(
      ...STEPS.map((s, i) => {
        const li = document.createElement('li');
        li.textContent = s.replaceAll('_', ' ');
        if (status === 'cancelled') {
          if (i === 0) li.className = 'done';
          if (i === 1) {
            li.className = 'cancelled';
            li.textContent = 'cancelled';
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

  // ---------- the stream, whatever the transport ----------

  function nowUs() {
    return (performance.timeOrigin + performance.now()) * 1000;
  }

  function onEvent(e) {
    if (e.seq <= state.lastSeq) {
      state.duplicates++;
      renderStats();
      return;
    }
    if (state.lastSeq > 0 && e.seq > state.lastSeq + 1) state.lost += e.seq - state.lastSeq - 1;
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
    li.dataset.kind = 'event';
    li.dataset.seq = String(e.seq);
    const badge = cell(`badge ${e.status}`, e.status.replaceAll('_', ' '));
    const status = document.createElement('span');
    status.append(badge);
    li.append(
      cell('seq', `#${e.seq}`),
      status,
      cell('latency', replayed ? 'replayed' : fmtMs(latencyMs)),
      cell('time', clock()),
    );
    addRow(li);
    renderStatus(e.status);
    renderStats();
  }

  function onReset(r) {
    // The resume point could not be served without a gap: the snapshot replaces our view.
    state.resets++;
    state.lastSeq = r.snapshot.lastSeq;
    note('reset', `reset (${r.reason}): now at seq ${r.snapshot.lastSeq}, ${r.snapshot.status}`);
    renderStatus(r.snapshot.status);
    renderStats();
  }

  function onSkipped(s) {
    // Not an error: this page read too slowly and the service dropped these events for it
    // (its queue's overflow policy), and said so. The cursor moves past them, so they do
    // not count as lost, and a resume continues after `toSeq`.
    if (s.toSeq <= state.lastSeq) return;
    state.lastSeq = s.toSeq;
    note('skipped', `skipped #${s.fromSeq}..#${s.toSeq} (${s.reason}): read too slowly`);
    renderStats();
  }

  function onEnd(reason, retryAfterMs) {
    state.ends.push(reason);
    if (reason === 'completed') {
      note('end', 'order finished: stream completed');
      stop('completed');
      return;
    }
    const advice = retryAfterMs === undefined ? '' : `, reconnecting in ${retryAfterMs} ms`;
    note('end', `server ended the stream (${reason})${advice}`);
    setConn('reconnecting');
  }

  /** Counted when a (re)connection is made after the first one. */
  function onReconnected() {
    state.reconnects++;
    if (state.lastSeq > 0) {
      state.resumes++;
      note('resume', `resumed after seq ${state.lastSeq}`);
    } else {
      note('resume', 'reconnected');
    }
    renderStats();
  }

  /** Marks the start of a (re)connection attempt: what was published before is replay. */
  function connecting() {
    state.connectStartedAtUs = nowUs();
  }

  function backoff(attempt) {
    // Full jitter: clients that lost the same server do not come back in step.
    return Math.random() * Math.min(MAX_BACKOFF_MS, 250 * 2 ** attempt);
  }

  function authHeaders() {
    const token = ui.token.value.trim();
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  // ---------- SSE ----------

  /**
   * EventSource cannot send headers. With a token, the page first asks for a session
   * cookie (which survives EventSource's own reconnects); failing that, a one-time ticket
   * for the URL. Without a token, nothing is needed.
   */
  async function sseAuthQuery(orderId) {
    const headers = authHeaders();
    if (!headers.authorization) return '';
    const session = await fetch('/v1/session', {
      method: 'POST',
      headers,
      credentials: 'same-origin',
    });
    if (session.ok) return '';
    const res = await fetch('/v1/stream-tickets', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ orderId }),
    });
    if (!res.ok) throw new Error(`stream ticket refused (${res.status})`);
    const { ticket } = await res.json();
    return `ticket=${encodeURIComponent(ticket)}`;
  }

  function startSse(orderId) {
    let es = null;
    let stopped = false;
    let opened = false;
    let attempt = 0;
    let timer = null;

    const open = async () => {
      if (stopped) return;
      setConn(opened ? 'reconnecting' : 'connecting');
      let query;
      try {
        query = [await sseAuthQuery(orderId), state.lastSeq > 0 ? `after=${state.lastSeq}` : '']
          .filter(Boolean)
          .join('&');
      } catch (err) {
        note('error', String(err.message || err));
        retry();
        return;
      }
      if (stopped) return;
      connecting();
      es = new EventSource(
        `/v1/orders/${encodeURIComponent(orderId)}/stream${query ? `?${query}` : ''}`,
        {
          withCredentials: true,
        },
      );
      es.onopen = () => {
        attempt = 0;
        if (opened) onReconnected();
        opened = true;
        setConn('live');
      };
      es.addEventListener('status', (m) => onEvent(JSON.parse(m.data)));
      es.addEventListener('reset', (m) => onReset(JSON.parse(m.data)));
      es.addEventListener('skipped', (m) => onSkipped(JSON.parse(m.data)));
      // The server sends `retry:` before `end` at shutdown, and EventSource applies it to
      // its own reconnect, which sends Last-Event-ID: nothing to do here but show it.
      es.addEventListener('end', (m) => onEnd(JSON.parse(m.data).reason));
      es.onerror = () => {
        if (stopped) return;
        if (es.readyState === EventSource.CLOSED) {
          // EventSource gives up on an HTTP error (401, 404, 503): retry ourselves.
          retry();
        } else {
          setConn('reconnecting');
        }
      };
    };
    const retry = () => {
      es?.close();
      if (stopped) return;
      setConn('reconnecting');
      timer = setTimeout(open, backoff(attempt++));
    };
    open();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
        es?.close();
      },
      drop() {
        es?.close();
        note('drop', `connection dropped at seq ${state.lastSeq}`);
        setConn('reconnecting');
        clearTimeout(timer);
        timer = setTimeout(open, 300);
      },
    };
  }

  // ---------- socket.io ----------

  function startWs(orderId) {
    const token = ui.token.value.trim();
    const socket = window.io('/orders', {
      transports: ['websocket'],
      auth: token ? { token } : {},
      reconnectionDelay: 500,
      reconnectionDelayMax: 5000,
    });
    let connectedBefore = false;
    let resubscribeTimer = null;
    let stopped = false;

    const subscribe = () => {
      connecting();
      socket.emit('subscribe', { orderId, afterSeq: state.lastSeq }, (ack) => {
        if (!ack || !ack.ok) {
          note('error', `subscribe failed: ${ack?.error?.message ?? 'no ack'}`);
          setConn('error');
          return;
        }
        setConn('live');
      });
    };
    socket.on('connect', () => {
      clearTimeout(resubscribeTimer);
      socket.io.reconnectionDelay(500);
      if (connectedBefore) onReconnected();
      connectedBefore = true;
      subscribe();
    });
    socket.on('connect_error', (err) => {
      if (!socket.active) note('error', `refused: ${err.message}`);
      setConn('reconnecting');
    });
    socket.on('disconnect', (reason) => {
      if (stopped) return;
      setConn('reconnecting');
      // A server-side disconnect is final for socket.io unless we reconnect ourselves.
      if (reason === 'io server disconnect') socket.connect();
    });
    socket.on('status', (e) => e.orderId === orderId && onEvent(e));
    socket.on('reset', (r) => r.snapshot.orderId === orderId && onReset(r));
    socket.on('skipped', (s) => s.orderId === orderId && onSkipped(s));
    socket.on('end', (end) => {
      if (end.orderId !== orderId) return;
      onEnd(end.reason, end.retryAfterMs);
      if (end.reason === 'completed') return;
      // Shutdown: the server closes the connection next; come back after its advice.
      if (end.retryAfterMs !== undefined) socket.io.reconnectionDelay(end.retryAfterMs);
      // Maximum stream age: the socket stays up, only this subscription ended.
      resubscribeTimer = setTimeout(() => socket.connected && subscribe(), end.retryAfterMs ?? 0);
    });
    setConn('connecting');
    return {
      stop() {
        stopped = true;
        clearTimeout(resubscribeTimer);
        socket.disconnect();
      },
      drop() {
        note('drop', `connection dropped at seq ${state.lastSeq}`);
        // Closes the engine's transport: socket.io reconnects by itself, then we resubscribe.
        socket.io.engine.close();
      },
    };
  }

  // ---------- long-poll ----------

  function startLongPoll(orderId) {
    let stopped = false;
    let controller = null;
    let dropped = false;
    let failed = false;
    let attempt = 0;

    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const loop = async () => {
      setConn('connecting');
      while (!stopped) {
        controller = new AbortController();
        if (failed || dropped || state.connectStartedAtUs === 0) connecting();
        try {
          const url = `/v1/orders/${encodeURIComponent(orderId)}/events?after=${state.lastSeq}&wait=${LONG_POLL_WAIT_S}`;
          const res = await fetch(url, {
            headers: authHeaders(),
            signal: controller.signal,
            cache: 'no-store',
          });
          if (res.status !== 200 && res.status !== 204) throw new Error(`HTTP ${res.status}`);
          if (failed || dropped) onReconnected();
          failed = dropped = false;
          attempt = 0;
          setConn('live');
          if (res.status === 204) {
            // Answered early by a stopping server: wait the advised (jittered) delay.
            const retryAfter = Number(res.headers.get('retry-after'));
            if (retryAfter > 0) {
              onEnd('shutdown', retryAfter * 1000);
              await sleep(Math.random() * retryAfter * 1000);
            }
            continue;
          }
          const body = await res.json();
          // A reset or skipped range, when present, comes before the events.
          if (body.reset) onReset(body.reset);
          if (body.skipped) onSkipped(body.skipped);
          for (const e of body.events) onEvent(e);
          if (body.completed) {
            onEnd('completed');
            return;
          }
        } catch (err) {
          if (stopped) return;
          if (dropped) continue;
          failed = true;
          note('error', `poll failed: ${err.message}`);
          setConn('reconnecting');
          await sleep(backoff(attempt++));
        }
      }
    };
    loop();
    return {
      stop() {
        stopped = true;
        controller?.abort();
      },
      drop() {
        dropped = true;
        note('drop', `poll aborted at seq ${state.lastSeq}`);
        setConn('reconnecting');
        controller?.abort();
      },
    };
  }

  // ---------- controls ----------

  const STARTERS = { sse: startSse, ws: startWs, 'long-poll': startLongPoll };

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
    session = { stop() {}, drop() {} };
    session = STARTERS[transport](orderId);
  }

  function stop(conn = 'idle') {
    const s = session;
    session = null;
    s?.stop();
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
  ui.drop.addEventListener('click', () => session?.drop());
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
    if (transport && STARTERS[transport]) ui.form.elements.transport.value = transport;
    if (params.get('order')) ui.order.value = params.get('order');
    renderStatus(undefined);
    setConn('idle');
    await loadToken();
    const ids = await loadSimulatorOrders();
    if (!ui.order.value && ids.length > 0) ui.order.value = ids[0];
    if (params.get('autostart') === '1') start();
  })();
})();
