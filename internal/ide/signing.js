// The Signing links panel: a GraphiQL plugin (✍ in the left bar) for the
// capture tab's inventory. Its boxes choose the parties required to sign
// (the tab's input.requiredSignatures, and the inventory id kept for that
// choice); it says who has signed; and while a party has not, it requests
// that party's link to sign from (requestSignature), shown as a link and as
// text to copy with its expiry, or ends it (cancelSignatureRequest).
//
// Its requests are the capture tab's own operations: the document the
// server gave this page (config.document), not the editor's text, which
// the user may have changed; with the tab's headers (the company header,
// or the key pasted there), to this server's endpoint only (connect-src
// 'self'). Inlined in the page by ide.Page: plain script, no module, no
// eval, no build step, nothing loaded from anywhere.
function signingPlugin(config) {
  const h = React.createElement;
  const { useState, useEffect, useRef, useReducer } = React;
  const { useEditorContext } = GraphiQL.React;
  const parties = config.parties;
  const names = { AGENT: 'Agent', OWNER: 'Owner', TENANT: 'Tenant' };
  const knownIds = Object.values(config.ids);

  // The capture tab: the tab whose operations make an inventory.
  const isCapture = (tab) => !!tab && /\bcreateInventory\s*\(/.test(tab.query || '');

  const parseJSON = (text, what) => {
    if (!text || !text.trim()) return {};
    try {
      const v = JSON.parse(text);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v;
    } catch (e) { /* said below */ }
    throw new Error('The tab\'s ' + what + ' are not a JSON object: fix them first.');
  };

  // run sends one of the capture document's operations; a GraphQL error
  // becomes the thrown error's message, with its code.
  async function run(operationName, variables, headers) {
    const res = await fetch(config.endpoint, {
      method: 'POST',
      headers: Object.assign({}, headers, { 'Content-Type': 'application/json', Accept: 'application/json' }),
      body: JSON.stringify({ query: config.document, operationName, variables }),
    });
    let body;
    try {
      body = await res.json();
    } catch (e) {
      throw new Error(res.status + ' ' + res.statusText + ': the server did not answer GraphQL.');
    }
    if (body.errors && body.errors.length) {
      const e = body.errors[0];
      const code = e.extensions && e.extensions.code;
      throw new Error((code ? code + ': ' : '') + e.message);
    }
    if (!body.data) throw new Error(res.status + ' ' + res.statusText);
    return body.data;
  }

  const when = (iso) => {
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString() + ' (' + iso + ')';
  };

  function Icon() {
    return h('svg', { viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor', strokeWidth: 1.5, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': 'true' },
      h('path', { d: 'M4 20l1-4L16 5l3 3L8 19l-4 1z' }),
      h('path', { d: 'M14 7l3 3' }),
      h('path', { d: 'M12 20h8' }));
  }

  function Panel() {
    const ed = useEditorContext({ nonNull: true });
    const active = ed.tabs[ed.activeTabIndex];
    const onCapture = isCapture(active);
    const captureIndex = ed.tabs.findIndex(isCapture);
    const [, redraw] = useReducer((n) => n + 1, 0);
    const [status, setStatus] = useState(null); // null: not read; {node: null}: not made; {node}
    const [party, setParty] = useState('TENANT');
    const [signer, setSigner] = useState(null); // null: the tab's signerName
    const [link, setLink] = useState(null); // {party, url, expiresAt}
    const [note, setNote] = useState(null); // {error, text}
    const [busy, setBusy] = useState(false);
    const [copied, setCopied] = useState(false);
    const urlField = useRef(null);

    // The tab's variables as the editor holds them now (the tab's state
    // follows the editor 100 ms late).
    let vars = {};
    let varsError = null;
    if (onCapture) {
      try {
        vars = parseJSON(ed.variableEditor ? ed.variableEditor.getValue() : active.variables, 'variables');
      } catch (e) {
        varsError = e.message;
      }
    }
    const input = vars.input && typeof vars.input === 'object' ? vars.input : {};
    const id = typeof vars.id === 'string' ? vars.id : (typeof input.id === 'string' ? input.id : '');
    const required = Array.isArray(input.requiredSignatures) ? input.requiredSignatures : config.defaultRequired;
    const signerName = signer !== null ? signer : (typeof vars.signerName === 'string' ? vars.signerName : '');

    const headers = () => parseJSON(ed.headerEditor ? ed.headerEditor.getValue() : active.headers, 'headers');

    async function refresh(forId) {
      if (!forId) return;
      try {
        const data = await run('SigningStatus', { id: forId }, headers());
        setStatus({ id: forId, node: data.node && data.node.requiredSignatures ? data.node : null });
      } catch (e) {
        setStatus({ id: forId, error: e.message });
      }
    }

    // Read who has signed when the panel opens on the tab, when the id
    // changes, and after each operation the tab runs (its response).
    useEffect(() => {
      if (onCapture && id) refresh(id);
    }, [onCapture, id, active && active.response]);

    const node = status && status.id === id ? status.node : undefined;
    const signed = node ? node.signatures.map((s) => s.party) : [];
    const unsigned = node && !node.isSigned ? parties.filter((p) => !signed.includes(p)) : [];

    // The party chosen stays one that can still sign: the tenant first.
    useEffect(() => {
      if (unsigned.length && !unsigned.includes(party)) setParty(unsigned.includes('TENANT') ? 'TENANT' : unsigned[0]);
    }, [unsigned.join(',')]);

    // choose ticks or unticks a party: the tab's input.requiredSignatures
    // changes, and so does its inventory id while it is one of the ids the
    // page keeps for each choice (an id the user typed stays theirs).
    function choose(p, on) {
      let v;
      try {
        v = parseJSON(ed.variableEditor.getValue(), 'variables');
      } catch (e) {
        setNote({ error: true, text: e.message });
        return;
      }
      v.input = v.input && typeof v.input === 'object' ? v.input : {};
      const now = new Set(Array.isArray(v.input.requiredSignatures) ? v.input.requiredSignatures : config.defaultRequired);
      if (on) now.add(p); else now.delete(p);
      const chosen = parties.filter((q) => now.has(q));
      if (!chosen.length) return;
      v.input.requiredSignatures = chosen;
      if (!v.input.id || knownIds.includes(v.input.id)) v.input.id = config.ids[chosen.join(',')];
      if (!v.id || knownIds.includes(v.id)) v.id = v.input.id;
      ed.variableEditor.setValue(JSON.stringify(v, null, 2));
      setLink(null);
      setNote(null);
      redraw();
    }

    async function act(what) {
      setBusy(true);
      setNote(null);
      setCopied(false);
      try {
        if (what === 'request') {
          if (!signerName.trim()) throw new Error('Type the name of who signs from the link.');
          const data = await run('RequestSigningLink', { id, party, signerName: signerName.trim() }, headers());
          setLink(Object.assign({ party }, data.requestSignature));
        } else {
          const data = await run('CancelSigningLink', { id, party }, headers());
          if (link && link.party === party) setLink(null);
          setNote({ text: data.cancelSignatureRequest.cancelled
            ? names[party] + '\'s link is ended: it no longer signs.'
            : names[party] + ' had no open link.' });
        }
      } catch (e) {
        setNote({ error: true, text: e.message });
      } finally {
        setBusy(false);
        refresh(id);
      }
    }

    async function copy() {
      try {
        await navigator.clipboard.writeText(link.url);
      } catch (e) { // no clipboard API (a plain-http host other than localhost): select and copy
        urlField.current.select();
        document.execCommand('copy');
      }
      setCopied(true);
    }

    const title = h('div', { className: 'graphiql-doc-explorer-title' }, 'Signing links');
    if (!onCapture) {
      return h('div', { className: 'signing' }, title,
        h('p', null, 'This panel works on the capture tab\'s inventory (the tab with CreateInventory).'),
        captureIndex >= 0
          ? h('button', { type: 'button', className: 'graphiql-button', onClick: () => ed.changeTab(captureIndex) }, 'Open the capture tab')
          : h('p', null, 'No open tab makes an inventory (CreateInventory): the capture tab was closed. Clearing this site\'s data in the browser brings the IDE\'s tabs back.'));
    }

    let state;
    if (varsError) state = h('p', { className: 'signing-error', role: 'alert' }, varsError);
    else if (!id) state = h('p', null, 'The variables name no inventory id.');
    else if (!status || status.id !== id) state = h('p', null, 'Reading who has signed…');
    else if (status.error) state = h('p', { className: 'signing-error', role: 'alert' }, status.error);
    else if (!node) state = h('p', null, 'Not made yet: run CreateInventory.');
    else {
      state = h('p', null,
        'Required: ', node.requiredSignatures.map((p) => names[p]).join(', '), '. ',
        'Signed: ', node.signatures.length ? node.signatures.map((s) => names[s.party] + ' (' + s.signerName + ', ' + s.method + ')').join(', ') : 'nobody yet', '. ',
        node.isSigned ? 'Signed by every required party: no link can sign it now.' : 'Not signed yet.');
    }

    const form = node && unsigned.length ? h('div', { className: 'signing-form' },
      h('label', null, 'Party',
        h('select', { value: party, disabled: busy, onChange: (e) => setParty(e.target.value) },
          unsigned.map((p) => h('option', { key: p, value: p }, names[p] + (node.requiredSignatures.includes(p) ? ' (required)' : ' (not required)'))))),
      h('label', null, 'Signer\'s name',
        h('input', { type: 'text', value: signerName, maxLength: 200, disabled: busy, placeholder: 'Who the link is for', onChange: (e) => setSigner(e.target.value) })),
      h('div', { className: 'signing-buttons' },
        h('button', { type: 'button', className: 'graphiql-button', disabled: busy || !id, onClick: () => act('request') }, 'Request ' + names[party].toLowerCase() + '\'s link'),
        h('button', { type: 'button', className: 'graphiql-button', disabled: busy || !id, onClick: () => act('cancel') }, 'Cancel ' + names[party].toLowerCase() + '\'s link'))) : null;

    // A link shown is dropped once it can no longer sign: its party has
    // signed (from it or otherwise), or the inventory is signed.
    const openLink = link && node && !node.isSigned && !signed.includes(link.party) ? link : null;
    const shown = openLink ? h('div', { className: 'signing-link' },
      h('p', null, names[openLink.party] + '\'s link: send it to them. It signs once, until ' + when(openLink.expiresAt) + '.'),
      h('p', null, h('a', { href: openLink.url, target: '_blank', rel: 'noopener noreferrer' }, openLink.url)),
      h('div', { className: 'signing-copy' },
        h('input', { type: 'text', readOnly: true, value: openLink.url, ref: urlField, 'aria-label': 'The link, to copy', onFocus: (e) => e.target.select() }),
        h('button', { type: 'button', className: 'graphiql-button', onClick: copy }, copied ? 'Copied' : 'Copy'))) : null;

    return h('div', { className: 'signing' }, title,
      h('p', null, 'Inventory ', h('code', null, id || '—')),
      h('fieldset', null,
        h('legend', null, 'Required signatures'),
        parties.map((p) => h('label', { key: p, className: 'signing-check' },
          h('input', { type: 'checkbox', name: 'requiredSignatures', value: p, checked: required.includes(p), disabled: busy || !!varsError || (required.length === 1 && required.includes(p)),
            onChange: (e) => choose(p, e.target.checked) }), ' ' + names[p]))),
      h('p', { className: 'signing-hint' }, 'A box changes the tab\'s variables (input.requiredSignatures and the id): run CreateInventory to make that inventory.'),
      state,
      h('div', { className: 'signing-buttons' },
        h('button', { type: 'button', className: 'graphiql-button', disabled: busy || !id, onClick: () => refresh(id) }, 'Refresh')),
      form, shown,
      note ? h('p', { className: note.error ? 'signing-error' : 'signing-note', role: note.error ? 'alert' : 'status' }, note.text) : null);
  }

  return { title: 'Signing links', icon: Icon, content: Panel };
}
