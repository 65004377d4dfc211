// The HTTP client: JSON requests, streams, uploads and downloads, all with the API key when the
// server has one (Authorization: Bearer). A 401 asks for the key once (onUnauthorized) and retries.
// Files behind the key are fetched and handed over as blob URLs (an <img src> or a link cannot
// send the header); images of stored messages arrive inline as data: URLs.
import { prefs } from "./prefs.js";

export class ApiError extends Error {
  constructor(status, message, type = "", code = "") {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
  }
}

async function errorOf(response) {
  let message = `${response.status} ${response.statusText}`;
  let type = "";
  let code = "";
  try {
    const body = await response.json();
    if (body && body.error) {
      message = body.error.message || message;
      type = body.error.type || "";
      code = body.error.code || "";
    }
  } catch {
    // not JSON: the status line will do
  }
  return new ApiError(response.status, message, type, code);
}

export class Api {
  constructor() {
    this.key = prefs.get("apiKey", "");
    this.onUnauthorized = null; // async ({wrong}) => new key or null; wrong: a key was refused
    this.asking = null;
  }

  setKey(key) {
    this.key = key || "";
    prefs.set("apiKey", this.key || null);
  }

  headers(extra = {}) {
    const headers = { ...extra };
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    return headers;
  }

  // The Response of a request that succeeded (2xx); ApiError otherwise.
  async fetch(method, path, { json, form, headers = {}, signal } = {}) {
    for (let attempt = 0; ; attempt++) {
      const init = { method, headers: this.headers(headers), signal, cache: "no-store" };
      if (json !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(json);
      } else if (form !== undefined) {
        init.body = form; // the browser sets the multipart boundary
      }
      const response = await fetch(path, init);
      if (response.ok) return response;
      const sentKey = Boolean(init.headers.Authorization);
      if (response.status === 401 && attempt < 3 && (await this.askForKey(sentKey))) continue;
      throw await errorOf(response);
    }
  }

  async askForKey(wrong = false) {
    if (!this.onUnauthorized) return false;
    if (!this.asking) {
      this.asking = this.onUnauthorized({ wrong }).finally(() => {
        this.asking = null;
      });
    }
    const key = await this.asking;
    if (!key) return false;
    this.setKey(key);
    return true;
  }

  async json(method, path, options) {
    const response = await this.fetch(method, path, options);
    return response.status === 204 ? null : response.json();
  }

  get(path, options) {
    return this.json("GET", path, options);
  }

  post(path, json = {}) {
    return this.json("POST", path, { json });
  }

  patch(path, json) {
    return this.json("PATCH", path, { json });
  }

  put(path, json) {
    return this.json("PUT", path, { json });
  }

  del(path) {
    return this.json("DELETE", path);
  }

  upload(file) {
    const form = new FormData();
    form.append("file", file, file.name || "file");
    return this.json("POST", "/v1/uploads", { form });
  }

  async download(path, fallbackName) {
    const response = await this.fetch("GET", path);
    const disposition = response.headers.get("Content-Disposition") || "";
    const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
    const plain = /filename="?([^";]+)"?/i.exec(disposition);
    const name = star ? decodeURIComponent(star[1]) : plain ? plain[1] : fallbackName;
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    return name;
  }
}
