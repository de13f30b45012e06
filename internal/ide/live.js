// The Live events panel: a GraphiQL plugin (⚡ in the left bar) that
// follows a property's writes and lists every event received: its kind,
// time, inventory and cursor. GraphiQL runs one operation at a time and
// shows a subscription's latest result only: the live tab stops when
// another tab runs, and each event replaces the one before. So the panel
// holds a subscription of its own, outside GraphiQL's: it keeps following
// while the tabs run, and while the panel is closed, and keeps every event.
//
// It follows the capture tab's property (input.propertyId, or any the user
// types), with the active tab's headers as the connection's credential,
// through the page's own fetcher (graphql-ws to this server's endpoint:
// connect-src 'self'). Its document is the live tab's, as the server gave
// it (config.document). Followed again after it stopped, it resumes after
// the last event it has (after), so that no write is missed between.
// Inlined in the page by ide.Page, as the Signing links panel is.
function livePlugin(config, fetcher) {
  const h = React.createElement;
  const { useState, useEffect, useReducer } = React;
  const { useEditorContext } = GraphiQL.React;
  const documentAST = GraphiQL.GraphQL.parse(config.document);

  // The subscription and its events live here, not in the panel: GraphiQL
  // unmounts a panel when another is shown or it is closed.
  const feed = {
    state: 'idle', // idle (never started), following, stopped, failed
    propertyId: '',
    events: [],
    error: null,
    iterator: null, // the subscription's results, whose return() ends it
    listeners: new Set(),
  };
  const changed = () => feed.listeners.forEach((redraw) => redraw());

  // Each start or stop is a new generation: a subscription of an older one
  // is over, whatever it answers later.
  let generation = 0;

  function stop() {
    generation++;
    const it = feed.iterator;
    feed.iterator = null;
    if (feed.state === 'following') feed.state = 'stopped';
    if (it && it.return) it.return();
    changed();
  }

  const describe = (errors) => errors.map((e) => {
    const code = e.extensions && e.extensions.code;
    return (code ? code + ': ' : '') + e.message;
  }).join('; ');

  async function follow(propertyId, headers) {
    // The last event's cursor, when following the same property again: the
    // events since are sent first.
    const last = propertyId === feed.propertyId && feed.events.length ? feed.events[feed.events.length - 1].cursor : null;
    stop();
    const mine = generation;
    if (propertyId !== feed.propertyId) feed.events = [];
    Object.assign(feed, { state: 'following', propertyId, error: null });
    changed();
    const variables = { propertyId: propertyId || null, after: last };
    let error = null;
    try {
      const results = await fetcher({ query: config.document, operationName: 'Live', variables }, { headers, documentAST });
      if (!results || !results[Symbol.asyncIterator]) {
        throw new Error(results && results.errors ? describe(results.errors) : 'the server did not start the subscription');
      }
      const it = results[Symbol.asyncIterator]();
      if (mine !== generation) { // stopped, or followed again, meanwhile
        if (it.return) it.return();
        return;
      }
      feed.iterator = it;
      for (;;) {
        const { value, done } = await it.next();
        if (mine !== generation) return;
        if (done) break;
        const event = value && value.data && value.data.inventoryEvents;
        if (event) feed.events = feed.events.concat([event]);
        if (value && value.errors && value.errors.length) {
          error = describe(value.errors);
          if (!event) { // refused: the subscription is over
            if (it.return) it.return();
            break;
          }
        }
        changed();
      }
    } catch (e) {
      error = e && e.message ? e.message : String(e);
    }
    if (mine !== generation) return;
    Object.assign(feed, { iterator: null, state: error ? 'failed' : 'stopped', error });
    changed();
  }

  const parseJSON = (text) => {
    try {
      const v = JSON.parse(text || '{}');
      return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
    } catch (e) {
      return null;
    }
  };

  // The capture tab: the tab whose operations make an inventory.
  const isCapture = (tab) => !!tab && /\bcreateInventory\s*\(/.test(tab.query || '');

  // captureProperty is the capture tab's input.propertyId, or the one the
  // page opened it with.
  function captureProperty(ed) {
    const tab = ed.tabs.find(isCapture);
    const vars = tab ? parseJSON(tab === ed.tabs[ed.activeTabIndex] && ed.variableEditor ? ed.variableEditor.getValue() : tab.variables) : null;
    const id = vars && vars.input && vars.input.propertyId;
    return typeof id === 'string' && id ? id : config.propertyId;
  }

  const time = (iso) => {
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleTimeString();
  };

  function Icon() {
    return h('svg', { viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor', strokeWidth: 1.5, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': 'true' },
      h('path', { d: 'M13 3L5 14h6l-1 7 8-11h-6l1-7z' }));
  }

  function Panel() {
    const ed = useEditorContext({ nonNull: true });
    const [, redraw] = useReducer((n) => n + 1, 0);
    const [property, setProperty] = useState(() => feed.state === 'idle' ? captureProperty(ed) : feed.propertyId);
    const [note, setNote] = useState(null);

    useEffect(() => {
      feed.listeners.add(redraw);
      return () => feed.listeners.delete(redraw);
    }, []);

    function start(propertyId) {
      const headers = parseJSON(ed.headerEditor ? ed.headerEditor.getValue() : (ed.tabs[ed.activeTabIndex] || {}).headers);
      if (!headers) {
        setNote('The tab\'s headers are not a JSON object: fix them first.');
        return;
      }
      setNote(null);
      follow(propertyId.trim(), headers);
    }

    // Opened the first time, the panel follows the capture tab's property.
    useEffect(() => {
      if (feed.state === 'idle') start(property);
    }, []);

    const following = feed.state === 'following';
    const shown = feed.propertyId ? 'property ' + feed.propertyId : 'every property of the company';
    let state;
    if (following) state = 'Following ' + shown + '.';
    else if (feed.state === 'failed') state = 'Stopped: ' + feed.error;
    else state = 'Stopped following ' + shown + '.';

    const events = feed.events.map((e, i) => h('li', { key: e.cursor, className: 'live-event', 'data-kind': e.kind },
      h('div', { className: 'live-event-head' },
        h('span', { className: 'live-event-number' }, (i + 1) + '.'),
        h('strong', { className: 'live-event-kind' }, e.kind),
        h('time', { dateTime: e.at, title: e.at }, time(e.at))),
      e.inventory ? h('div', null, 'Inventory ', h('code', null, e.inventory.id),
        ' v' + e.inventory.version + (e.inventory.isSigned ? ', signed' : '') + (e.inventory.approvalCode ? ', approval ' + e.inventory.approvalCode : '')) : null,
      e.by ? h('div', null, 'By ' + e.by) : null,
      h('div', { className: 'live-event-cursor' }, 'Cursor ', h('code', null, e.cursor))));

    return h('div', { className: 'live' },
      h('div', { className: 'graphiql-doc-explorer-title' }, 'Live events'),
      h('p', { className: 'live-hint' }, 'Every write to the property\'s inventories as it commits, oldest first: the panel keeps following while the tabs run and while it is closed.'),
      h('label', null, 'Property (empty: all of them)',
        h('input', { type: 'text', value: property, spellCheck: false, onChange: (e) => setProperty(e.target.value) })),
      h('div', { className: 'live-buttons' },
        h('button', { type: 'button', className: 'graphiql-button', onClick: () => start(property) }, following ? 'Follow this property' : 'Follow'),
        h('button', { type: 'button', className: 'graphiql-button', disabled: !following, onClick: stop }, 'Stop'),
        h('button', { type: 'button', className: 'graphiql-button', disabled: !feed.events.length, onClick: () => { feed.events = []; changed(); } }, 'Clear')),
      h('p', { className: feed.state === 'failed' ? 'live-error' : 'live-state', role: feed.state === 'failed' ? 'alert' : 'status' }, state,
        ' ' + feed.events.length + (feed.events.length === 1 ? ' event.' : ' events.')),
      note ? h('p', { className: 'live-error', role: 'alert' }, note) : null,
      h('ol', { className: 'live-events' }, events));
  }

  return { title: 'Live events', icon: Icon, content: Panel };
}
