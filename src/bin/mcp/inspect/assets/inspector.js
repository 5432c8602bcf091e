// The page of `mcp inspect` (docs/inspect.md): one view per URL, drawn from
// the inspector's JSON API and its event stream.
//
// Every string that comes from a server, an app or the API reaches the DOM
// as a Text node or an attribute value, never as HTML; the only URLs the
// page navigates to are its own query URLs.
'use strict';

(() => {
  const QUERY = new URLSearchParams(location.search);
  const TOKEN = QUERY.get('token') || '';

  /** The longest text shown in one place; longer text is cut, with a note. */
  const MAX_TEXT = 100 * 1024;
  /** The most entries a live list keeps in the DOM (the oldest go first). */
  const MAX_ENTRIES = 500;
  /** A traffic message longer than this is shown collapsed. */
  const COLLAPSE_AT = 2000;
  const SERVERS_REFRESH_MS = 5000;
  const APP_INIT_TIMEOUT_MS = 30000;
  /** How long the app view waits for the event stream before creating the app. */
  const STREAM_WAIT_MS = 5000;
  const IMAGE_MIME = /^image\/(png|jpeg|gif|webp)$/;
  const AUDIO_MIME = /^audio\/[\w.+-]+$/;
  const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

  const PROXY_READY = 'ui/notifications/sandbox-proxy-ready';
  const SIZE_CHANGED = 'ui/notifications/size-changed';
  const INITIALIZED = 'ui/notifications/initialized';
  const TOOL_RESULT = 'ui/notifications/tool-result';

  // ---- DOM helpers -------------------------------------------------------

  const $ = (selector) => document.querySelector(selector);

  function clip(text) {
    if (text.length <= MAX_TEXT) return text;
    return `${text.slice(0, MAX_TEXT)}\n… [cut: the first 100 KB of ${text.length} characters are shown]`;
  }

  /** Appends children: nodes as they are, anything else as (clipped) text; null, undefined and false are skipped. */
  function add(node, ...children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : clip(String(child)));
    }
    return node;
  }

  function fill(node, ...children) {
    node.replaceChildren();
    return add(node, ...children);
  }

  /** An element; attributes that are null, undefined or false are left out, true ones are set empty. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? '' : String(value));
    }
    return add(node, ...children);
  }

  function button(label, onClick, attrs = {}) {
    const node = el('button', { type: 'button', ...attrs }, label);
    node.addEventListener('click', onClick);
    return node;
  }

  const pretty = (value) => JSON.stringify(value, null, 2) ?? String(value);
  const jsonPre = (value, cls = 'json') => el('pre', { class: cls }, pretty(value));
  const textPre = (text) => el('pre', { class: 'text' }, text);
  const muted = (text) => el('p', { class: 'muted' }, text);
  const errorLine = (err) => el('p', { class: 'error' }, describe(err));
  const section = (title, ...content) => el('section', {}, el('h2', {}, title), ...content);
  const heading = (title, name) => el('h1', {}, title, ' ', el('code', {}, name));
  const asArray = (value) => (Array.isArray(value) ? value : []);
  const td = (...content) => el('td', {}, ...content);
  const badge = (state) => el('span', { class: 'badge', 'data-state': state }, state);
  const time = () => el('time', {}, new Date().toLocaleTimeString());
  const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const warningsList = (warnings) =>
    (asArray(warnings).length ? el('ul', { class: 'warnings' }, warnings.map((w) => el('li', {}, w))) : null);

  /** A definition list of the pairs whose value is present. */
  function kv(pairs) {
    const shown = pairs.filter(([, value]) => value !== null && value !== undefined && value !== '');
    return el('dl', { class: 'kv' }, shown.map(([key, value]) => [el('dt', {}, key), el('dd', {}, value)]));
  }

  function table(id, headers, rows) {
    return el('table', { id },
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
      el('tbody', {}, rows));
  }

  /** Keeps a list to its newest MAX_ENTRIES children. */
  function trim(list) {
    while (list.childElementCount > MAX_ENTRIES) list.firstElementChild.remove();
  }

  // ---- URLs and HTTP -----------------------------------------------------

  /** A URL of this page: the token, then the given parameters (empty ones left out). */
  function pageHref(params) {
    const query = new URLSearchParams({ token: TOKEN });
    for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
    return `${location.pathname}?${query}`;
  }

  const pageLink = (label, params, attrs = {}) => el('a', { href: pageHref(params), ...attrs }, label);

  class ApiError extends Error {
    constructor(cls, message, status) {
      super(message);
      this.cls = cls;
      this.status = status;
    }
  }

  function describe(err) {
    return err instanceof ApiError ? `${err.cls}: ${err.message}` : `error: ${err && err.message}`;
  }

  /** A call to the inspector's API: GET without a body, POST with one. Throws an ApiError. */
  async function api(path, body) {
    const headers = { 'X-Mcp-Inspect-Token': TOKEN };
    const init = body === undefined ? { headers }
      : { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    const response = await fetch(path, init).catch((err) => {
      throw new ApiError('network', err.message, 0);
    });
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      const error = (data && data.error) || {};
      throw new ApiError(error.class || 'http', error.message || `HTTP ${response.status}`, response.status);
    }
    if (data === null) throw new ApiError('http', 'the answer is not JSON', response.status);
    return data;
  }

  const get = (path, params = {}) => api(`${path}?${new URLSearchParams(params)}`);
  const post = (path, body) => api(path, body);

  /** Runs a request for a result area: `pending`, then the answer drawn and its status, or the failure. */
  async function fillResult(area, request, render, statusOf = () => 'ok') {
    area.dataset.status = 'pending';
    fill(area, muted('Waiting for the answer…'));
    try {
      const answer = await request();
      fill(area, render(answer));
      area.dataset.status = statusOf(answer);
    } catch (err) {
      fill(area, errorLine(err));
      area.dataset.status = 'error';
    }
  }

  const toolStatus = (result) => (result && result.isError ? 'tool-error' : 'ok');

  /** Fetches a view's data; on failure shows it in the view and answers null. */
  async function load(view, request) {
    try {
      return await request();
    } catch (err) {
      add(view, errorLine(err));
      return null;
    }
  }

  // ---- Results -----------------------------------------------------------

  function byteSize(base64) {
    const bare = base64.replace(/\s/g, '');
    const padding = bare.endsWith('==') ? 2 : bare.endsWith('=') ? 1 : 0;
    return Math.max(0, Math.floor((bare.length * 3) / 4) - padding);
  }

  function formatBytes(n) {
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
    return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  }

  const truncatedNote = (item) => (item.truncated ? el('p', { class: 'note' }, 'cut by the result limit') : null);

  /** An image or audio as a data URL when its type is one a browser plays safely; else only its size. */
  function media(data, mimeType, tag) {
    if (typeof data !== 'string') return muted('no data');
    const mime = typeof mimeType === 'string' ? mimeType : '';
    const what = `${mime || 'unknown type'}, ${formatBytes(byteSize(data))}`;
    const pattern = tag === 'img' ? IMAGE_MIME : AUDIO_MIME;
    if (!pattern.test(mime) || !BASE64.test(data)) return muted(`not shown: ${what}`);
    const node = el(tag, tag === 'audio' ? { controls: true } : { alt: what });
    node.src = `data:${mime};base64,${data.replace(/\s/g, '')}`;
    return el('div', { class: 'media' }, node, muted(what));
  }

  /** An item of a resource's contents: bytes in `data` from the crate, `blob` from the wire (an app's tool result). */
  function resourceItem(item) {
    const contents = item && typeof item === 'object' ? item : {};
    const data = contents.data ?? contents.blob;
    return el('div', { class: 'resource-content', 'data-uri': contents.uri ?? '' },
      kv([['uri', contents.uri], ['mimeType', contents.mimeType]]),
      typeof contents.text === 'string' ? textPre(contents.text) : null,
      typeof data === 'string' ? media(data, contents.mimeType, 'img') : null,
      truncatedNote(contents));
  }

  const renderContents = (answer) =>
    el('div', { class: 'contents' }, asArray(answer.contents).map(resourceItem), warningsList(answer.warnings));

  function resourceLink(block, ctx) {
    const out = el('div', { class: 'read-result' });
    const read = () => fillResult(out, () => post('/api/read', { server: ctx.server, uri: block.uri }), renderContents);
    return [
      kv([['uri', block.uri], ['name', block.name], ['title', block.title], ['mimeType', block.mimeType],
        ['description', block.description]]),
      ctx.server && typeof block.uri === 'string' ? button('Read', read, { class: 'link-read' }) : null,
      out,
    ];
  }

  function blockBody(block, type, ctx) {
    switch (type) {
      case 'text': return [textPre(block.text ?? ''), truncatedNote(block)];
      case 'image': return media(block.data, block.mimeType, 'img');
      case 'audio': return media(block.data, block.mimeType, 'audio');
      case 'resource_link': return resourceLink(block, ctx);
      case 'resource': return resourceItem(block.resource);
      default: return jsonPre(block);
    }
  }

  /** A content block; `ctx.server` is the server its links can be read from, if known. */
  function renderBlock(block, ctx) {
    const type = block && typeof block.type === 'string' ? block.type : 'unknown';
    return el('div', { class: 'content-block', 'data-type': type },
      el('span', { class: 'block-type' }, type), blockBody(block || {}, type, ctx));
  }

  function renderToolResult(result, ctx) {
    const r = result && typeof result === 'object' ? result : {};
    return el('div', { class: 'tool-result' },
      r.isError ? el('p', { class: 'error' }, 'The tool reported an error (isError).') : null,
      asArray(r.content).map((block) => renderBlock(block, ctx)),
      r.structuredContent != null
        ? [el('h4', {}, 'structuredContent'), jsonPre(r.structuredContent, 'structured')] : null,
      warningsList(r.warnings));
  }

  function renderPromptResult(answer, ctx) {
    return el('div', { class: 'prompt-result' },
      answer.description ? el('p', { class: 'description' }, answer.description) : null,
      asArray(answer.messages).map((m) => el('div', { class: 'prompt-message', 'data-role': m.role ?? '' },
        el('span', { class: 'role' }, m.role ?? ''), renderBlock(m.content, ctx))),
      warningsList(answer.warnings));
  }

  // ---- Forms from JSON Schema -----------------------------------------------

  /** The widget kind for a property: a primitive type, or null (then only the JSON editor edits it). */
  function fieldKind(prop) {
    let type = prop && prop.type;
    // ["string", "null"]: a nullable primitive is edited as the primitive.
    if (Array.isArray(type)) {
      const concrete = type.filter((t) => t !== 'null');
      type = concrete.length === 1 ? concrete[0] : undefined;
    }
    return ['string', 'number', 'integer', 'boolean'].includes(type) ? type : null;
  }

  /** The properties of an object schema a form can edit. */
  function schemaFields(schema) {
    const props = (schema && typeof schema.properties === 'object' && schema.properties) || {};
    const required = new Set(asArray(schema && schema.required));
    return Object.entries(props)
      .map(([name, prop]) => ({ name, prop: prop || {}, required: required.has(name), kind: fieldKind(prop) }))
      .filter((field) => field.kind);
  }

  /** The choices of an enumerated property: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s with titles. */
  function enumOptions(prop) {
    if (Array.isArray(prop.enum)) {
      return prop.enum.map((value, i) => ({ value, label: asArray(prop.enumNames)[i] ?? String(value) }));
    }
    const alternatives = asArray(prop.oneOf ?? prop.anyOf);
    const consts = alternatives.length && alternatives.every((a) => a && typeof a === 'object' && 'const' in a);
    return consts ? alternatives.map((a) => ({ value: a.const, label: a.title ?? String(a.const) })) : null;
  }

  function fieldWidget({ name, prop, required, kind }) {
    const options = kind !== 'boolean' && enumOptions(prop);
    let widget;
    if (kind === 'boolean') {
      widget = el('input', { type: 'checkbox', name });
    } else if (options) {
      widget = el('select', { name, required },
        el('option', { value: '' }, '—'), options.map((o) => el('option', { value: String(o.value) }, o.label)));
    } else if (kind === 'string') {
      widget = el('input', { type: 'text', name, required, minlength: prop.minLength, maxlength: prop.maxLength });
    } else {
      widget = el('input', { type: 'number', name, required, step: kind === 'integer' ? 1 : 'any',
        min: prop.minimum, max: prop.maximum });
    }
    widget.dataset.kind = kind;
    return el('label', { class: `field field-${kind}` },
      el('span', { class: 'field-name' }, prop.title || name, required && el('span', { class: 'required' }, ' *')),
      widget,
      prop.description ? el('small', {}, prop.description) : null);
  }

  /** A widget's value: booleans always present, empty and non-numeric entries absent. */
  function readWidget(widget) {
    const kind = widget.dataset.kind;
    if (kind === 'boolean') return { present: true, value: widget.checked };
    if (widget.value === '') return { present: false };
    if (kind === 'string') return { present: true, value: widget.value };
    const number = Number(widget.value);
    return Number.isFinite(number) ? { present: true, value: number } : { present: false };
  }

  /** Shows a value in a widget; a value of another type clears it. */
  function writeWidget(widget, value) {
    const kind = widget.dataset.kind;
    if (kind === 'boolean') {
      widget.checked = value === true;
    } else {
      const fits = kind === 'string' ? typeof value === 'string' : typeof value === 'number';
      widget.value = fits ? String(value) : '';
    }
  }

  const widgetOf = (form, field) => form.elements.namedItem(field.name);

  function readForm(form, fields) {
    const values = {};
    for (const field of fields) {
      const { present, value } = readWidget(widgetOf(form, field));
      if (present) values[field.name] = value;
    }
    return values;
  }

  function parseArguments(text) {
    let value;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { error: `invalid JSON: ${err.message}` };
    }
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    return isObject ? { value } : { error: 'the arguments must be a JSON object' };
  }

  // ---- The event stream --------------------------------------------------

  const streamHandlers = new Map();
  let streamOpened;
  const streamReady = new Promise((resolve) => { streamOpened = resolve; });
  let missedTotal = 0;

  function onStream(type, handler) {
    if (!streamHandlers.has(type)) streamHandlers.set(type, []);
    streamHandlers.get(type).push(handler);
  }

  function dispatch(event) {
    let entry;
    try {
      entry = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!entry || typeof entry.type !== 'string') return;
    for (const handler of streamHandlers.get(entry.type) || []) handler(entry);
  }

  function setStreamState(state, text) {
    const status = $('#stream-status');
    status.dataset.state = state;
    status.textContent = `Event stream: ${text}`;
  }

  function connectStream() {
    const source = new EventSource(`/api/stream?${new URLSearchParams({ token: TOKEN })}`);
    source.addEventListener('open', () => {
      setStreamState('connected', 'connected');
      streamOpened();
    });
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) return setStreamState('reconnecting', 'reconnecting…');
      // The browser gives up on a stream refused outright; try again later.
      setStreamState('closed', 'disconnected');
      setTimeout(connectStream, SERVERS_REFRESH_MS);
    });
    // Every entry is an unnamed event whose data says its type.
    source.addEventListener('message', dispatch);
  }

  function onMissed(entry) {
    missedTotal += Number(entry.count) || 0;
    $('#stream-missed').textContent = `Missed ${missedTotal} stream entries: the page fell behind.`;
  }

  // ---- Elicitation (every view) ----------------------------------------------

  const elicitations = { queue: [], shown: null };

  function onElicitation(request) {
    // A reconnected stream sends the waiting questions again.
    const known = elicitations.shown ? [elicitations.shown, ...elicitations.queue] : elicitations.queue;
    if (known.some((waiting) => waiting.id === request.id)) return;
    elicitations.queue.push(request);
    showNextElicitation();
  }

  function onElicitationDone({ id }) {
    if (elicitations.shown && elicitations.shown.id === id) closeElicitation();
    else elicitations.queue = elicitations.queue.filter((request) => request.id !== id);
  }

  function showNextElicitation() {
    if (elicitations.shown || !elicitations.queue.length) return;
    elicitations.shown = elicitations.queue.shift();
    const dialog = $('#elicitation-dialog');
    fill(dialog, elicitationForm(elicitations.shown));
    dialog.showModal();
  }

  function closeElicitation() {
    const dialog = $('#elicitation-dialog');
    if (dialog.open) dialog.close();
    dialog.replaceChildren();
    elicitations.shown = null;
    showNextElicitation();
  }

  function elicitationForm(request) {
    const isUrl = request.mode === 'url';
    const fields = isUrl ? [] : schemaFields(request.schema);
    const declared = isUrl ? [] : Object.keys((request.schema && request.schema.properties) || {});
    const unsupported = declared.filter((name) => !fields.some((f) => f.name === name));
    const error = el('p', { id: 'elicitation-error', class: 'error' });
    const form = el('form', { id: 'elicitation', 'data-elicitation-id': request.id },
      el('h2', {}, 'Server ', el('code', {}, request.binding ?? ''), ' asks:'),
      el('p', { class: 'elicitation-message' }, request.message ?? ''),
      isUrl && el('p', {}, 'URL (the inspector does not open it): ', el('code', { class: 'url' }, request.url ?? '')),
      fields.map(fieldWidget),
      unsupported.length ? muted(`Not editable here, left out: ${unsupported.join(', ')}`) : null,
      error,
      el('div', { class: 'actions' },
        el('button', { type: 'submit', id: 'elicit-accept' }, 'Accept'),
        button('Decline', () => answer('decline'), { id: 'elicit-decline' }),
        button('Cancel', () => answer('cancel'), { id: 'elicit-cancel' })));
    for (const field of fields) if ('default' in field.prop) writeWidget(widgetOf(form, field), field.prop.default);
    const setBusy = (busy) => form.querySelectorAll('button').forEach((b) => { b.disabled = busy; });

    async function answer(action) {
      const content = action === 'accept' && !isUrl ? readForm(form, fields) : undefined;
      setBusy(true);
      try {
        await post('/api/elicitations/answer', { id: request.id, action, content });
        if (elicitations.shown === request) closeElicitation();
      } catch (err) {
        // 404: it ended meanwhile; nothing is left to answer.
        if (err.status === 404 && elicitations.shown === request) return closeElicitation();
        error.textContent = describe(err);
        setBusy(false);
      }
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      answer('accept');
    });
    return form;
  }

  // ---- Sidebar -----------------------------------------------------------

  const serverListeners = [];

  async function refreshServers() {
    let servers;
    try {
      servers = asArray((await get('/api/servers')).servers);
      $('#server-list-error').textContent = '';
    } catch (err) {
      $('#server-list-error').textContent = describe(err);
      return serverListeners.forEach((listener) => listener(null, err));
    }
    const current = QUERY.get('server');
    fill($('#server-list'), servers.map((s) => el('li', {},
      pageLink([el('span', { class: 'name' }, s.binding), badge(s.state)], { server: s.binding },
        { 'data-server': s.binding, 'aria-current': s.binding === current ? 'page' : null }))));
    serverListeners.forEach((listener) => listener(servers, null));
  }

  function renderNavigation(viewName) {
    const server = QUERY.get('server');
    const item = (label, params, current) => el('li', {},
      pageLink(label, params, { 'aria-current': current ? 'page' : null }));
    fill($('#nav-views'), el('ul', {},
      item('Servers', { view: 'servers' }, viewName === 'servers'),
      item('Model tools', { view: 'model' }, viewName === 'model'),
      item('Events', { view: 'events' }, viewName === 'events'),
      item('Traffic', { view: 'traffic' }, viewName === 'traffic')));
    if (!server) return;
    fill($('#nav-server'), el('h2', {}, server), el('ul', {},
      item('Tools', { server }, ['server', 'tool', 'app'].includes(viewName)),
      item('Prompts', { server, view: 'prompts' }, viewName === 'prompts'),
      item('Resources', { server, view: 'resources' }, viewName === 'resources'),
      item('Tasks', { server, view: 'tasks' }, viewName === 'tasks')));
  }

  // ---- Views -------------------------------------------------------------
  //
  // Each view draws into `view` and resolves once its first data is drawn.

  function identity(server) {
    return server ? [server.title || server.name, server.version].filter(Boolean).join(' ') : '';
  }

  function capabilityNames(caps) {
    if (!caps || typeof caps !== 'object') return '';
    return Object.keys(caps).filter((key) => caps[key] != null)
      .map((key) => (key === 'extensions' ? `extensions(${Object.keys(caps.extensions).join(', ')})` : key))
      .join(', ');
  }

  function serversTable(servers) {
    return table('servers',
      ['Name', 'State', 'Transport', 'Protocol', 'Server', 'Capabilities', 'Tools', 'Last failure'],
      servers.map((s) => el('tr', { 'data-server': s.binding, 'data-state': s.state },
        td(pageLink(s.binding, { server: s.binding })), td(badge(s.state)), td(s.transportKind),
        td(s.protocolVersion), td(identity(s.server)), td(capabilityNames(s.capabilities)), td(s.toolCount),
        el('td', { class: 'error' }, s.failure ? `${s.failure.class}: ${s.failure.message}` : ''))));
  }

  function viewServers(view) {
    const holder = el('div');
    add(view, el('h1', {}, 'Servers'), holder);
    // The table follows the sidebar's refresh; a failed refresh keeps the last table.
    return new Promise((drawn) => serverListeners.push((servers, err) => {
      if (servers) fill(holder, servers.length ? serversTable(servers) : muted('No servers.'));
      else if (!holder.querySelector('table')) fill(holder, errorLine(err));
      drawn();
    }));
  }

  /** The `ui://` resource of a tool's app: the crate's checked `app`, else `_meta.ui` as sent. */
  function appResourceUri(tool) {
    const uri = (tool.app && tool.app.resourceUri) ?? (tool.meta && tool.meta.ui && tool.meta.ui.resourceUri);
    return typeof uri === 'string' && uri.startsWith('ui://') ? uri : null;
  }

  function visibilityOf(tool) {
    const visibility = tool.meta && tool.meta.ui && tool.meta.ui.visibility;
    return Array.isArray(visibility) ? visibility.join(', ') : '';
  }

  function toolsTable(server, tools) {
    return table('tools', ['Name', 'Model name', 'Title', 'Description', 'Visibility', 'Warnings'],
      tools.map((t) => el('tr', { 'data-tool': t.rawName },
        td(pageLink(t.rawName, { server, tool: t.rawName })), td(el('code', {}, t.modelName)), td(t.title),
        td(el('div', { class: 'clamp' }, t.description ?? '')), td(visibilityOf(t)), td(warningsList(t.warnings)))));
  }

  async function viewServer(view, server) {
    add(view, heading('Server', server));
    const catalog = await load(view, () => get('/api/catalog', { server }));
    if (!catalog) return;
    const count = (list, label, params) => pageLink(`${asArray(list).length} ${label}`, { server, ...params });
    add(view,
      kv([['server', identity(catalog.server)], ['protocol', catalog.protocolVersion],
        ['generation', catalog.generation], ['digest', el('code', {}, catalog.digest ?? '')]]),
      el('p', { class: 'counts' },
        count(catalog.prompts, 'prompts', { view: 'prompts' }), ' · ',
        count(catalog.resources, 'resources', { view: 'resources' }), ' · ',
        count(catalog.resourceTemplates, 'resource templates', { view: 'resources' })),
      catalog.instructions ? section('Instructions', textPre(catalog.instructions)) : null,
      section(`Tools (${asArray(catalog.tools).length})`, toolsTable(server, asArray(catalog.tools))),
      section('Warnings', warningsList(catalog.warnings) || muted('None.')),
      section('Applied tolerances', warningsList(catalog.appliedTolerances) || muted('None.')));
  }

  /** The call form: fields for the primitive properties, and the JSON editor, which is the truth. */
  function toolForm(server, tool, argsParam) {
    const fields = schemaFields(tool.inputSchema);
    const editor = el('textarea', { id: 'tool-args', rows: 8, spellcheck: 'false' });
    const argsError = el('p', { id: 'tool-args-error', class: 'error' });
    const result = el('div', { id: 'tool-result', class: 'result' }, muted('Not called yet.'));
    const appHref = (args) => pageHref({ server, tool: tool.rawName, view: 'app', args: JSON.stringify(args) });
    const appLink = appResourceUri(tool) ? el('a', { id: 'open-app', href: appHref({}) }, 'Open its app') : null;
    const form = el('form', { id: 'tool-form', 'data-server': server, 'data-tool': tool.rawName, novalidate: true },
      fields.map(fieldWidget),
      el('label', { class: 'editor' }, el('span', { class: 'field-name' }, 'Arguments (JSON)'), editor),
      argsError,
      el('div', { class: 'actions' }, el('button', { type: 'submit', id: 'tool-call' }, 'Call'), appLink));

    /** The editor's arguments, or null when they do not parse (the error is shown). */
    function editorArgs() {
      const parsed = parseArguments(editor.value);
      argsError.textContent = parsed.error || '';
      editor.dataset.invalid = Boolean(parsed.error);
      if (parsed.error) return null;
      if (appLink) appLink.href = appHref(parsed.value);
      return parsed.value;
    }
    const showInFields = (args) => fields.forEach((field) => writeWidget(widgetOf(form, field), args[field.name]));

    editor.addEventListener('input', () => {
      const args = editorArgs();
      if (args) showInFields(args);
    });
    form.addEventListener('input', (event) => {
      const field = fields.find((f) => event.target !== editor && f.name === event.target.name);
      const args = field && editorArgs();
      if (!args) return; // a field edit cannot merge into JSON that does not parse
      const { present, value } = readWidget(event.target);
      if (present) args[field.name] = value;
      else delete args[field.name];
      editor.value = pretty(args);
      editorArgs();
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const args = editorArgs();
      if (!args) {
        fill(result, el('p', { class: 'error' }, `invalid_arguments: ${argsError.textContent}`));
        result.dataset.status = 'error';
        return;
      }
      fillResult(result, () => post('/api/call', { server, tool: tool.rawName, arguments: args }),
        (answer) => renderToolResult(answer, { server }), toolStatus);
    });

    editor.value = argsParam ?? '{}';
    const initial = editorArgs();
    if (initial) showInFields(initial);
    return [section('Call', form), section('Result', result)];
  }

  async function viewTool(view, server, name) {
    add(view, el('p', { class: 'crumbs' }, pageLink(server, { server }), ' / ', name));
    const catalog = await load(view, () => get('/api/catalog', { server }));
    const tool = catalog && asArray(catalog.tools).find((t) => t.rawName === name);
    if (catalog && !tool) add(view, el('p', { class: 'error' }, `not_found: ${server} has no tool ${name}`));
    if (!tool) return;
    add(view,
      el('h1', {}, tool.title || tool.rawName),
      tool.description ? el('p', { class: 'description' }, tool.description) : null,
      kv([['rawName', el('code', {}, tool.rawName)], ['modelName', el('code', {}, tool.modelName ?? '')],
        ['taskSupport', tool.taskSupport], ['visibility', visibilityOf(tool)], ['app', appResourceUri(tool)],
        ['inputSchemaDigest', el('code', {}, tool.inputSchemaDigest ?? '')],
        ['outputSchemaDigest', tool.outputSchemaDigest ? el('code', {}, tool.outputSchemaDigest) : null]]),
      warningsList(tool.warnings),
      toolForm(server, tool, QUERY.get('args')),
      section('Input schema', jsonPre(tool.inputSchema)),
      tool.outputSchema != null ? section('Output schema', jsonPre(tool.outputSchema)) : null,
      tool.annotations ? section('Annotations', jsonPre(tool.annotations)) : null);
  }

  /** A prompt's form: its arguments are strings, drawn with the schema fields' widgets. */
  function promptForm(server, prompt, result) {
    const fields = asArray(prompt.arguments).map((a) => ({
      name: a.name, prop: { title: a.title, description: a.description }, required: a.required === true, kind: 'string',
    }));
    const form = el('form', { class: 'prompt-form', 'data-prompt': prompt.name, novalidate: true },
      el('h3', {}, prompt.title || prompt.name, prompt.title ? [' ', el('code', {}, prompt.name)] : null),
      prompt.description ? el('p', { class: 'description' }, prompt.description) : null,
      fields.map(fieldWidget),
      el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'prompt-get' }, 'Get')));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const values = readForm(form, fields);
      fillResult(result, () => post('/api/prompt', { server, name: prompt.name, arguments: values }),
        (answer) => renderPromptResult(answer, { server }));
    });
    return form;
  }

  async function viewPrompts(view, server) {
    add(view, heading('Prompts of', server));
    const answer = await load(view, () => get('/api/prompts', { server }));
    if (!answer) return;
    const result = el('div', { id: 'prompt-result', class: 'result' }, muted('Nothing asked yet.'));
    const prompts = asArray(answer.prompts);
    add(view,
      prompts.length ? prompts.map((p) => promptForm(server, p, result)) : muted('This server offers no prompts.'),
      warningsList(answer.warnings),
      section('Result', result));
  }

  async function viewResources(view, server) {
    add(view, heading('Resources of', server));
    const answer = await load(view, () => get('/api/resources', { server }));
    if (!answer) return;
    const result = el('div', { id: 'resource-result', class: 'result' }, muted('Nothing read yet.'));
    const read = (uri) => fillResult(result, () => post('/api/read', { server, uri }), renderContents);
    const resourceRow = (r) => el('tr', { 'data-uri': r.uri },
      td(el('code', {}, r.uri)), td(r.name), td(r.title), td(r.mimeType),
      td(typeof r.size === 'number' ? formatBytes(r.size) : ''),
      td(button('Read', () => read(r.uri), { class: 'resource-read' })));
    // A template's input starts as the template itself, for the person to fill in.
    const templateItem = (t) => {
      const input = el('input', { type: 'text', class: 'template-uri', value: t.uriTemplate ?? '' });
      return el('li', { 'data-uri-template': t.uriTemplate ?? '' },
        el('code', {}, t.uriTemplate ?? ''), ' ', el('span', { class: 'muted' }, t.title || t.name || ''),
        el('div', { class: 'inline' }, input, button('Read', () => read(input.value), { class: 'template-read' })));
    };
    const resources = asArray(answer.resources);
    const templates = asArray(answer.resourceTemplates);
    add(view,
      section('Resources', resources.length
        ? table('resources', ['URI', 'Name', 'Title', 'MIME type', 'Size', ''], resources.map(resourceRow))
        : muted('None.')),
      section('Templates', templates.length
        ? el('ul', { id: 'resource-templates' }, templates.map(templateItem))
        : muted('None.')),
      warningsList(answer.warnings),
      section('Contents', result));
  }

  function taskRow(server, task, output) {
    const row = el('tr', { 'data-task-id': task.id, 'data-status': task.status });
    // Status and Cancel answer the task as it is now: its row is redrawn.
    const showTask = (answer) => {
      row.replaceWith(taskRow(server, answer.task, output));
      return jsonPre(answer.task);
    };
    const act = (what) => () => fillResult(output, () => post(`/api/tasks/${what}`, { server, id: task.id }), showTask);
    const result = () => fillResult(output, () => post('/api/tasks/result', { server, id: task.id }),
      (answer) => renderToolResult(answer, { server }), toolStatus);
    return add(row,
      td(el('code', {}, task.id)), td(badge(task.status)), td(task.message), td(task.createdAt), td(task.lastUpdatedAt),
      td(task.ttlMs != null ? `${task.ttlMs} ms` : ''),
      el('td', { class: 'actions' },
        button('Status', act('status'), { class: 'task-status' }),
        button('Result', result, { class: 'task-result' }),
        button('Cancel', act('cancel'), { class: 'task-cancel' })));
  }

  function viewTasks(view, server) {
    const holder = el('div');
    const output = el('div', { id: 'task-result', class: 'result' }, muted('No action yet.'));
    const refresh = async () => {
      try {
        const answer = await get('/api/tasks', { server });
        const tasks = asArray(answer.tasks);
        fill(holder,
          tasks.length ? table('tasks', ['ID', 'Status', 'Message', 'Created', 'Updated', 'TTL', ''],
            tasks.map((t) => taskRow(server, t, output))) : muted('No tasks.'),
          warningsList(answer.warnings));
      } catch (err) {
        fill(holder, errorLine(err));
      }
    };
    add(view, heading('Tasks of', server),
      el('div', { class: 'toolbar' }, button('Refresh', refresh, { id: 'tasks-refresh' })),
      holder, section('Output', output));
    return refresh();
  }

  /** The model-facing tool list, `ul#model-tools`, and a promise of its drawing. */
  function modelToolsPanel() {
    const list = el('ul', { id: 'model-tools' });
    const loaded = get('/api/model-tools').then((answer) => {
      const tools = asArray(answer.tools);
      fill(list, tools.map((t) => el('li', { 'data-model-name': t.modelName },
        el('code', { class: 'model-name' }, t.modelName), ' ',
        el('span', { class: 'muted' }, `${t.binding} / ${t.rawName}`),
        t.description ? el('div', { class: 'clamp' }, t.description) : null)));
      if (!tools.length) list.after(muted('No tools are offered to a model.'));
    }, (err) => list.after(errorLine(err)));
    return { panel: section('Model tools', list), loaded };
  }

  function viewModel(view) {
    const { panel, loaded } = modelToolsPanel();
    add(view, el('h1', {}, 'Model tools'), muted('The tools as a model is offered them (app-only tools are absent).'),
      panel);
    return loaded;
  }

  /** An event in the crate's serde form: its `type` names it (`state_changed`, `catalog_adopted`, …). */
  function eventEntry(entry) {
    const event = entry.event && typeof entry.event === 'object' ? entry.event : { text: String(entry.event ?? '') };
    const kind = String(event.type ?? '');
    const { type: _type, binding: _binding, ...fields } = event;
    return el('li', { 'data-kind': kind, 'data-binding': entry.binding },
      time(), entry.binding ? el('span', { class: 'binding' }, entry.binding) : null,
      el('span', { class: 'kind' }, kind), textPre(JSON.stringify(fields)));
  }

  function trafficEntry(entry) {
    const text = typeof entry.message === 'string' ? entry.message : pretty(entry.message);
    const body = text.length > COLLAPSE_AT
      ? el('details', {}, el('summary', {}, `${text.slice(0, 160)}… (${text.length} characters)`), textPre(text))
      : textPre(text);
    const direction = entry.direction === 'in' ? 'in' : 'out';
    // `bytes` is the message's size before the server cut it for the page.
    const size = typeof entry.bytes === 'number' ? el('span', { class: 'muted' }, formatBytes(entry.bytes)) : null;
    return el('li', { 'data-direction': direction, 'data-binding': entry.binding ?? '' },
      time(), el('span', { class: 'binding' }, entry.binding ?? ''),
      el('span', { class: 'direction' }, direction === 'in' ? '← in' : '→ out'), size, body);
  }

  /** A live list of one stream type, newest last, with pause (entries kept aside) and clear. */
  function viewLive(view, title, listId, type, render) {
    const list = el('ul', { id: listId, class: 'live' });
    const held = [];
    let paused = false;
    const show = (entry) => trim(add(list, render(entry)));
    const pause = button('Pause', () => {
      paused = !paused;
      pause.textContent = paused ? 'Resume' : 'Pause';
      list.dataset.paused = paused;
      if (!paused) held.splice(0).forEach(show);
    }, { id: 'live-pause' });
    const clear = button('Clear', () => {
      list.replaceChildren();
      held.length = 0;
    }, { id: 'live-clear' });
    onStream(type, (entry) => {
      if (!paused) return show(entry);
      held.push(entry);
      if (held.length > MAX_ENTRIES) held.shift();
    });
    add(view, el('h1', {}, title), el('div', { class: 'toolbar' }, pause, clear), list);
    // Drawn once connected: an entry is shown only if the stream was open when it happened.
    return streamReady;
  }

  // ---- The app view ------------------------------------------------------

  const methodOf = (data) => (data && typeof data === 'object' && typeof data.method === 'string' ? data.method : null);

  /** An http(s) URL as a link for the person to follow (the page never follows it); anything else as text. */
  function externalLink(url) {
    let parsed = null;
    try {
      parsed = new URL(url);
    } catch {
      // Not a URL: shown as text below.
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return el('code', {}, url);
    return el('a', { href: parsed.href, rel: 'noopener noreferrer', target: '_blank' }, url);
  }

  function decisionEntry(entry) {
    const detail = entry.detail;
    const url = entry.kind === 'open-link' ? (typeof detail === 'string' ? detail : detail && detail.url) : null;
    const text = typeof detail === 'string' ? textPre(detail) : jsonPre(detail);
    const shown = typeof url === 'string' ? externalLink(url) : text;
    return el('li', { 'data-kind': entry.kind ?? '' }, time(), el('span', { class: 'kind' }, entry.kind ?? ''), shown);
  }

  /**
   * Frames the app's sandbox proxy and relays: what the app posts goes to
   * POST /api/apps/message, and the answer's messages go back to the app.
   * `ui` holds the view's elements and its status setter.
   */
  function startAppBridge(answer, ui) {
    const origin = new URL(answer.sandboxUrl).origin;
    const frame = el('iframe', { id: 'app-frame', title: 'MCP app' });
    frame.style.width = '100%';
    frame.style.height = '600px';
    frame.src = answer.sandboxUrl;
    // Until the proxy says it is up, a message would reach the frame's
    // initial blank document (another origin) and be dropped: keep it.
    let proxyReady = false;
    const waiting = [];

    function deliver(message) {
      if (methodOf(message) === TOOL_RESULT) {
        const params = message.params || {};
        fill(ui.toolResult, renderToolResult(params, { server: ui.server }));
        ui.toolResult.dataset.status = toolStatus(params);
      }
      if (proxyReady) frame.contentWindow.postMessage(message, origin);
      else waiting.push(message);
    }

    function relay(message) {
      post('/api/apps/message', { app: answer.app, message }).then((reply) => {
        asArray(reply.messages).forEach(deliver);
        if (methodOf(message) === INITIALIZED) ui.setStatus('ready');
      }, (err) => { ui.error.textContent = `relaying the app's message: ${describe(err)}`; });
    }

    window.addEventListener('message', (event) => {
      if (event.origin !== origin || event.source !== frame.contentWindow) return;
      const method = methodOf(event.data);
      if (method === PROXY_READY) {
        proxyReady = true;
        waiting.splice(0).forEach((m) => frame.contentWindow.postMessage(m, origin));
        return;
      }
      const height = method === SIZE_CHANGED && event.data.params ? event.data.params.height : undefined;
      if (typeof height === 'number' && Number.isFinite(height)) {
        frame.style.height = `${Math.min(Math.max(height, 100), 4000)}px`;
      }
      relay(event.data);
    });
    ui.container.append(frame);
    return { id: answer.app, deliver };
  }

  function teardownButton(app, bridge, ui) {
    const status = el('span', { id: 'app-teardown-status', class: 'muted' });
    const teardown = button('Tear down', async () => {
      teardown.disabled = true;
      try {
        const reply = await post('/api/apps/teardown', { app });
        asArray(reply.messages).forEach(bridge.deliver);
        status.textContent = 'torn down';
        ui.container.dataset.tornDown = 'true';
      } catch (err) {
        status.textContent = describe(err);
        teardown.disabled = false;
      }
    }, { id: 'app-teardown' });
    return [teardown, status];
  }

  async function viewApp(view, server, tool) {
    const container = el('div', { id: 'app-frame-container', 'data-app-status': 'loading' });
    const ui = {
      server,
      container,
      error: el('p', { id: 'app-error', class: 'error' }),
      toolResult: el('div', { id: 'app-tool-result', class: 'result' }, muted('Not received yet.')),
      setStatus: (status) => {
        if (container.dataset.appStatus === 'loading') container.dataset.appStatus = status;
      },
    };
    const fail = (message) => {
      if (container.dataset.appStatus !== 'loading') return;
      ui.setStatus('error');
      ui.error.textContent = message;
    };
    const toolbar = el('div', { class: 'toolbar' });
    const about = el('div', { class: 'app-about' });
    const decisions = el('ul', { id: 'app-decisions' });
    const argsText = QUERY.get('args') ?? '{}';
    add(view,
      el('p', { class: 'crumbs' }, pageLink(server, { server }), ' / ',
        pageLink(tool, { server, tool, args: argsText })),
      heading('App of', tool), toolbar, ui.error,
      el('div', { class: 'app-layout' }, container, el('div', { class: 'app-side' },
        section('App', about),
        section('Arguments', textPre(argsText)),
        section('Tool result', ui.toolResult),
        section('App requests', decisions),
        modelToolsPanel().panel)));

    // Stream entries for an app can come before POST /api/apps answers with
    // its id: they are held, then replayed once the bridge exists.
    let bridge = null;
    const early = [];
    const onAppEntry = (entry) => {
      if (!bridge) {
        if (early.length < MAX_ENTRIES) early.push(entry);
      } else if (entry.app === bridge.id && entry.type === 'app') {
        asArray(entry.messages).forEach(bridge.deliver);
      } else if (entry.app === bridge.id) {
        trim(add(decisions, decisionEntry(entry)));
      }
    };
    onStream('app', onAppEntry);
    onStream('app-decision', onAppEntry);

    const args = parseArguments(argsText);
    if (args.error) return fail(`invalid_arguments: ${args.error}`);
    // The host sends the tool's input and result on the stream: be connected first.
    await Promise.race([streamReady, delay(STREAM_WAIT_MS)]);
    let answer;
    try {
      answer = await post('/api/apps', { server, tool, arguments: args.value });
      bridge = startAppBridge(answer, ui);
    } catch (err) {
      return fail(describe(err));
    }
    setTimeout(() => fail(`the app did not initialize within ${APP_INIT_TIMEOUT_MS / 1000} s`), APP_INIT_TIMEOUT_MS);
    add(toolbar, teardownButton(answer.app, bridge, ui));
    add(about, kv([['uri', answer.uri], ['sandbox', answer.sandbox], ['allow', answer.allow], ['csp', answer.csp]]),
      warningsList(answer.warnings));
    early.splice(0).forEach(onAppEntry);
  }

  // ---- Start -------------------------------------------------------------

  const SERVER_VIEWS = { prompts: viewPrompts, resources: viewResources, tasks: viewTasks };
  const VIEWS = {
    servers: viewServers,
    model: viewModel,
    events: (view) => viewLive(view, 'Events', 'events', 'event', eventEntry),
    traffic: (view) => viewLive(view, 'Traffic', 'traffic', 'traffic', trafficEntry),
  };

  function viewNameOf(query) {
    const view = query.get('view') || '';
    if (view === 'app' || view in SERVER_VIEWS || view in VIEWS) return view;
    if (query.get('server') && query.get('tool')) return 'tool';
    return query.get('server') ? 'server' : 'servers';
  }

  async function renderView(view, name) {
    const server = QUERY.get('server');
    const tool = QUERY.get('tool');
    if (name in VIEWS) return VIEWS[name](view);
    if (!server || (name === 'app' && !tool)) {
      const what = name === 'app' ? 'An app view needs a server and a tool.' : 'Choose a server in the sidebar.';
      return add(view, muted(what));
    }
    if (name in SERVER_VIEWS) return SERVER_VIEWS[name](view, server);
    if (name === 'app') return viewApp(view, server, tool);
    return name === 'tool' ? viewTool(view, server, tool) : viewServer(view, server);
  }

  function start() {
    const name = viewNameOf(QUERY);
    document.body.dataset.view = name;
    renderNavigation(name);
    onStream('elicitation', onElicitation);
    onStream('elicitation-done', onElicitationDone);
    onStream('missed', onMissed);
    // Escape would close the dialog without an answer: make it the Cancel button.
    $('#elicitation-dialog').addEventListener('cancel', (event) => {
      event.preventDefault();
      const cancel = $('#elicit-cancel');
      if (cancel && !cancel.disabled) cancel.click();
    });
    const view = $('#view');
    renderView(view, name)
      .catch((err) => add(view, errorLine(err)))
      .finally(() => { document.body.dataset.ready = 'true'; });
    connectStream();
    refreshServers();
    setInterval(refreshServers, SERVERS_REFRESH_MS);
  }

  start();
})();
