// Talking to lightrag-pg serve: credentials, the workspace header, errors, NDJSON streams.

const KEY = "lightrag_pg.apiKey";
const TOKEN = "lightrag_pg.token";
const WORKSPACE = "lightrag_pg.workspace";

/** A failed request; status 0 means the server could not be reached. */
export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
  get needsLogin(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export const creds = {
  get apiKey(): string {
    return localStorage.getItem(KEY) ?? "";
  },
  set apiKey(value: string) {
    value ? localStorage.setItem(KEY, value) : localStorage.removeItem(KEY);
  },
  get token(): string {
    return localStorage.getItem(TOKEN) ?? "";
  },
  set token(value: string) {
    value ? localStorage.setItem(TOKEN, value) : localStorage.removeItem(TOKEN);
  },
  get workspace(): string {
    return localStorage.getItem(WORKSPACE) ?? "";
  },
  set workspace(value: string) {
    value ? localStorage.setItem(WORKSPACE, value) : localStorage.removeItem(WORKSPACE);
  },
};

type AuthListener = (error: ApiError) => void;
let onAuthFailure: AuthListener = () => {};

/** Called whenever a request is refused for want of credentials (401 or 403). */
export function setAuthListener(listener: AuthListener): void {
  onAuthFailure = listener;
}

export function authHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (creds.apiKey) headers["X-API-Key"] = creds.apiKey;
  if (creds.token) headers["Authorization"] = `Bearer ${creds.token}`;
  if (creds.workspace) headers["LIGHTRAG-WORKSPACE"] = creds.workspace;
  return headers;
}

function detailOf(body: unknown, fallback: string): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail))
      return detail.map((d) => (d && typeof d === "object" && "msg" in d ? String(d.msg) : String(d))).join("; ");
  }
  return fallback;
}

export async function failure(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    /* not JSON */
  }
  const error = new ApiError(response.status, detailOf(body, `${response.status} ${response.statusText}`));
  if (error.needsLogin) onAuthFailure(error);
  return error;
}

async function send(path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, "The server is unreachable. Check that lightrag-pg serve is running.");
  }
  if (!response.ok) throw await failure(response);
  return response;
}

/** A JSON request with the credentials and workspace headers. */
export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = authHeaders();
  let payload: BodyInit | undefined;
  if (body instanceof URLSearchParams || body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await send(path, { method, headers, body: payload, signal });
  return (await response.json()) as T;
}

/** POST ``body`` and yield each NDJSON line of the answer as an object. */
export async function* ndjson(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
  const response = await send(path, {
    method: "POST",
    headers: { ...authHeaders(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    const lines = buffer.split("\n");
    buffer = done ? "" : (lines.pop() ?? "");
    for (const line of lines) if (line.trim()) yield JSON.parse(line) as Record<string, unknown>;
    if (done) return;
  }
}

/** Upload one file with XHR (fetch has no upload progress); ``progress`` gets 0..1. */
export function upload(file: File, progress: (fraction: number) => void): Promise<{ track_id: string; message: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/documents/upload");
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => event.lengthComputable && progress(event.loaded / event.total);
    xhr.onerror = () => reject(new ApiError(0, "The server is unreachable."));
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as { track_id: string; message: string });
      else {
        const error = new ApiError(xhr.status, detailOf(body, `${xhr.status} ${xhr.statusText}`));
        if (error.needsLogin) onAuthFailure(error);
        reject(error);
      }
    };
    const form = new FormData();
    form.append("file", file);
    xhr.send(form);
  });
}

export type AuthStatus = {
  auth_configured: boolean;
  access_token?: string;
  auth_mode: string;
  webui_title?: string;
  webui_description?: string;
  core_version?: string;
  api_version?: string;
};

export type Health = {
  status: string;
  configuration?: {
    workspace: string;
    request_workspace: string;
    open_workspaces: string[];
    workspaces?: string[];
    query_defaults?: QueryDefaults;
  };
};

/** The retrieval switches a query gets when it does not set them (``/health``). */
export type QueryDefaults = { bridge: boolean; lexical: boolean };
