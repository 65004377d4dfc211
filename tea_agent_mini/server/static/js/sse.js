// Server-sent events over fetch(): EventSource cannot send an API key header, fetch can.
// readSSE yields {id, event, data} for each event of a response body; comments (": ping") are
// skipped; data is decoded JSON when it parses, else the raw text.

export async function* readSSE(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let fields = { id: null, event: "", data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n")) >= 0) {
        let line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line === "") {
          if (fields.data.length) yield finish(fields);
          fields = { id: fields.id, event: "", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (name === "data") fields.data.push(text);
        else if (name === "event") fields.event = text;
        else if (name === "id") fields.id = text;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function finish(fields) {
  const raw = fields.data.join("\n");
  let data = raw;
  try {
    data = JSON.parse(raw);
  } catch {
    // not JSON: keep the text
  }
  const id = fields.id === null || fields.id === "" ? null : Number(fields.id);
  return { id, event: fields.event || (data && data.type) || "message", data };
}
