// The admin API client: one token, JSON in and out, and the API's error
// envelope {"error":{"message","type","code"}} turned into an ApiError
// whose message is shown to the user as it is.

// The admin API lives beside the dashboard: /dashboard/ → /admin/.
const base = new URL('../admin/', document.baseURI);

export class ApiError extends Error {
  constructor(status, message, type, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type || '';
    this.code = code || '';
  }
}

export class Client {
  constructor(token, onUnauthorized) {
    this.token = token;
    this.onUnauthorized = onUnauthorized;
  }

  get(path) { return this.request('GET', path); }
  // getAll reads every page of a list (docs/admin.md, "Lists") and
  // answers them as one list object: the account picker and the key
  // table show a whole list, never only its first page.
  async getAll(path) {
    const sep = path.includes('?') ? '&' : '?';
    let page = await this.get(`${path}${sep}limit=1000`);
    const data = [...(page.data || [])];
    for (let n = 0; page.has_more && page.last_id && n < 100; n++) {
      page = await this.get(`${path}${sep}limit=1000&after=${encodeURIComponent(page.last_id)}`);
      data.push(...(page.data || []));
    }
    return { object: 'list', data, has_more: Boolean(page.has_more) };
  }
  // getText answers the body as text: an export (CSV, JSON Lines).
  getText(path) { return this.request('GET', path, undefined, 'text'); }
  // getBlob answers the body as a Blob: a stored file's bytes.
  getBlob(path) { return this.request('GET', path, undefined, 'blob'); }
  post(path, body) { return this.request('POST', path, body ?? {}); }
  put(path, body) { return this.request('PUT', path, body ?? {}); }
  del(path) { return this.request('DELETE', path); }

  async request(method, path, body, raw) {
    const headers = { Accept: raw ? '*/*' : 'application/json', Authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(new URL(path.replace(/^\//, ''), base), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
      });
    } catch {
      throw new ApiError(0, 'The gateway could not be reached. Check that it is running, then try again.', 'network_error', 'network_error');
    }
    if (raw === 'blob' && res.ok) return res.blob();
    const text = await res.text();
    if (raw && res.ok) return text;
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = null; }
    }
    if (!res.ok) {
      const e = data && typeof data.error === 'object' && data.error ? data.error : {};
      const err = new ApiError(res.status,
        typeof e.message === 'string' && e.message ? e.message : `The gateway answered ${res.status} ${res.statusText || ''}`.trim() + '.',
        e.type, e.code);
      if (res.status === 401 && this.onUnauthorized) this.onUnauthorized(err);
      throw err;
    }
    if (text && data === null) {
      throw new ApiError(res.status, 'The gateway answered with something that is not JSON.', 'server_error', 'bad_response');
    }
    return data;
  }
}

// path builds an API path with each part escaped: account names and ids
// come from the API and could hold any character.
export function path(...parts) {
  return '/' + parts.map((p) => encodeURIComponent(String(p))).join('/');
}

// claims returns the decoded payload of a JWT, or null. It is read only to
// tell the user when the token expires; the server checks the signature.
export function claims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    const value = JSON.parse(decodeURIComponent(Array.from(json, (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('')));
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}
