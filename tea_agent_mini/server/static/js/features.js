// What this server offers, read from GET /openapi.json: optional parts (memory, tasks, team, flows,
// export) show their panels only when their routes are registered.

export class Features {
  constructor(doc = { paths: {}, components: {} }) {
    this.doc = doc;
    this.paths = Object.keys(doc.paths || {});
  }

  static async load() {
    try {
      const response = await fetch("/openapi.json", { cache: "no-store" });
      if (response.ok) return new Features(await response.json());
    } catch {
      // an old server or a proxy in the way: the core UI still works
    }
    return new Features();
  }

  has(path, method = "get") {
    const item = (this.doc.paths || {})[path];
    return Boolean(item && item[method]);
  }

  // The first route under `prefix` with a path parameter, e.g. "/v1/memory/{id}".
  itemPath(prefix) {
    return this.paths.find((path) => path.startsWith(`${prefix}/{`) && path.split("/").length === prefix.split("/").length + 1) || null;
  }

  get memory() {
    return this.has("/v1/memory");
  }

  get tasks() {
    return this.has("/v1/tasks");
  }

  get team() {
    return this.has("/v1/team");
  }

  get flows() {
    return this.has("/v1/flows/runs");
  }

  get notices() {
    return this.has("/v1/notices");
  }

  get export() {
    return this.paths.some((path) => path.startsWith("/v1/export/"));
  }

  exportPath(format) {
    return this.paths.find((path) => path.startsWith(`/v1/export/${format}/`)) || null;
  }

  // Property names of a JSON request body (resolving one $ref), or null when undocumented.
  bodyFields(path, method) {
    const operation = ((this.doc.paths || {})[path] || {})[method];
    const content = operation && operation.requestBody && operation.requestBody.content;
    let schema = content && (content["application/json"] || Object.values(content)[0]);
    schema = schema && schema.schema;
    if (schema && schema.$ref) {
      const name = schema.$ref.split("/").pop();
      schema = ((this.doc.components || {}).schemas || {})[name];
    }
    return schema && schema.properties ? new Set(Object.keys(schema.properties)) : null;
  }
}

export function listOf(response, ...keys) {
  if (Array.isArray(response)) return response;
  for (const key of ["data", ...keys]) if (response && Array.isArray(response[key])) return response[key];
  return [];
}

export function fillPath(template, id) {
  return template.replace(/\{[^}]+\}/, encodeURIComponent(id));
}
