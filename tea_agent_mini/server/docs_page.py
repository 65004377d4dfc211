"""``/docs``: one self-contained HTML page that renders ``/openapi.json`` (no CDN, no framework).

All text from the document is inserted with ``textContent``; the page's CSP allows only its own
inline script and style (by hash) and requests to this server.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f7f7f9}
header{background:#1d2330;color:#fff;padding:1rem 2rem}header h1{margin:0;font-size:1.4rem}
main{max-width:60rem;margin:0 auto;padding:1rem 2rem 4rem}
h2{margin-top:2rem;border-bottom:1px solid #ccd}
details{background:#fff;border:1px solid #dde;border-radius:6px;margin:.4rem 0}
summary{cursor:pointer;padding:.5rem .8rem;display:flex;gap:.8rem;align-items:baseline}
.m{font:600 .8rem monospace;padding:.1rem .5rem;border-radius:4px;color:#fff;
  min-width:3.5rem;text-align:center}
.get{background:#2f7d4f}.post{background:#2d5fa8}.patch{background:#a86d2d}.delete{background:#a83232}
.p{font-family:monospace}.s{color:#556}.body{padding:0 1rem 1rem}
pre{background:#f0f0f4;padding:.6rem;border-radius:4px;overflow:auto;font-size:.8rem}
table{border-collapse:collapse}td,th{border:1px solid #dde;padding:.2rem .5rem;text-align:left}
.lock{font-size:.8rem;color:#a86d2d}
"""

SCRIPT = """
const el = (tag, cls, text) => { const e = document.createElement(tag);
  if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const resolve = (doc, s) => s && s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s;
function schemaBlock(doc, schema) {
  const name = schema && schema.$ref ? schema.$ref.split('/').pop() + ' ' : '';
  return el('pre', '', name + JSON.stringify(resolve(doc, schema), null, 2));
}
function operation(doc, path, method, op) {
  const d = el('details'); const s = el('summary');
  s.append(el('span', 'm ' + method, method.toUpperCase()), el('span', 'p', path),
           el('span', 's', op.summary || ''));
  if (op.security && op.security.length) s.append(el('span', 'lock', 'key'));
  const b = el('div', 'body'); d.append(s, b);
  if (op.description) b.append(el('p', '', op.description));
  if (op.parameters) {
    const t = el('table'); t.append(el('tr'));
    t.firstChild.append(el('th', '', 'parameter'), el('th', '', 'in'), el('th', '', 'about'));
    for (const p of op.parameters) { const r = el('tr');
      r.append(el('td', 'p', p.name), el('td', '', p.in), el('td', '', p.description || ''));
      t.append(r); }
    b.append(t);
  }
  if (op.requestBody) for (const [type, c] of Object.entries(op.requestBody.content)) {
    b.append(el('h4', '', 'Request body: ' + type), schemaBlock(doc, c.schema)); }
  for (const [status, r] of Object.entries(op.responses)) {
    b.append(el('h4', '', status + ' ' + (r.description || '')));
    for (const [type, c] of Object.entries(r.content || {})) {
      if (status.startsWith('2') && c.schema)
        b.append(el('div', 's', type), schemaBlock(doc, c.schema));
    }
  }
  return d;
}
fetch('/openapi.json').then(r => r.json()).then(doc => {
  const main = document.querySelector('main');
  document.querySelector('h1').textContent = doc.info.title + ' ' + doc.info.version + ' API';
  main.append(el('p', '', doc.info.description));
  for (const tag of doc.tags) {
    const ops = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        if (op.tags[0] === tag.name) ops.push([path, method, op]);
    if (!ops.length) continue;
    main.append(el('h2', '', tag.description));
    for (const [path, method, op] of ops) main.append(operation(doc, path, method, op));
  }
}).catch(err => {
  document.querySelector('main').append(el('p', '', 'Could not load /openapi.json: ' + err));
});
"""

DOCS_HTML = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    f"<title>tea-agent-mini API</title><style>{STYLE}</style></head>"
    "<body><header><h1>tea-agent-mini API</h1></header><main></main>"
    f"<script>{SCRIPT}</script></body></html>"
)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


DOCS_CSP = (
    f"default-src 'none'; script-src {_sha256(SCRIPT)}; style-src {_sha256(STYLE)}; "
    "connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
)
