// The shell: sign-in when the server asks for it, the workspace selector and the three pages.
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, api, creds, setAuthListener, type AuthStatus, type Health, type QueryDefaults } from "./api";
import { DocumentsPage } from "./documents";
import { GraphPage } from "./graph";
import { RetrievalPage } from "./retrieval";
import { Login } from "./login";
import { ErrorBox } from "./ui";

const PAGES = [
  { id: "documents", title: "Documents" },
  { id: "graph", title: "Knowledge graph" },
  { id: "retrieval", title: "Retrieval" },
] as const;
type PageId = (typeof PAGES)[number]["id"];

function pageFromHash(): PageId {
  const id = location.hash.replace(/^#\/?/, "");
  return (PAGES.find((p) => p.id === id)?.id ?? "documents") as PageId;
}

type Phase =
  | { kind: "loading" }
  | { kind: "unreachable"; message: string }
  | { kind: "login"; accounts: boolean; message: string }
  | { kind: "ready" };

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });
  const [about, setAbout] = useState<AuthStatus | null>(null);
  const [page, setPage] = useState<PageId>(pageFromHash);
  const [workspace, setWorkspace] = useState(creds.workspace);
  const [workspaces, setWorkspaces] = useState<string[]>([]);
  const [queryDefaults, setQueryDefaults] = useState<QueryDefaults | null>(null);

  const start = useCallback(async () => {
    setPhase({ kind: "loading" });
    let status: AuthStatus;
    try {
      status = await api<AuthStatus>("GET", "/auth-status");
    } catch (error) {
      setPhase({ kind: "unreachable", message: (error as Error).message });
      return;
    }
    setAbout(status);
    const guest = (!status.auth_configured && status.access_token) || "";
    if (guest) creds.token = guest;
    try {
      await api("GET", "/documents/status_counts");
    } catch (error) {
      if (error instanceof ApiError && error.needsLogin) {
        // a refusal is news only for credentials the user gave, not for the guest token
        const message = creds.apiKey || (creds.token && creds.token !== guest) ? error.message : "";
        setPhase({ kind: "login", accounts: status.auth_configured, message });
        return;
      }
      if (error instanceof ApiError && error.status === 0) {
        setPhase({ kind: "unreachable", message: error.message });
        return;
      }
    }
    setPhase({ kind: "ready" });
    try {
      const health = await api<Health>("GET", "/health");
      const config = health.configuration;
      if (config?.query_defaults) setQueryDefaults(config.query_defaults);
      if (config)
        setWorkspaces([
          ...new Set(
            [config.workspace, ...(config.workspaces ?? []), ...config.open_workspaces, creds.workspace].filter(Boolean),
          ),
        ]);
    } catch {
      /* the selector then offers what the user types */
    }
  }, []);

  useEffect(() => {
    setAuthListener((error) =>
      setPhase((current) =>
        current.kind === "ready" ? { kind: "login", accounts: !!about?.auth_configured, message: error.message } : current,
      ),
    );
  }, [about]);
  useEffect(() => {
    void start();
  }, [start]);
  useEffect(() => {
    const onHash = () => setPage(pageFromHash());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  const chooseWorkspace = (name: string) => {
    const trimmed = name.trim();
    if (trimmed === workspace) return;
    creds.workspace = trimmed;
    setWorkspace(trimmed);
    void start();
  };
  const signOut = () => {
    creds.apiKey = "";
    creds.token = "";
    void start();
  };

  const title = about?.webui_title ?? "lightrag_pg";
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand" title={about?.webui_description}>
          {title}
        </span>
        {phase.kind === "ready" && (
          <nav aria-label="Main">
            {PAGES.map((p) => (
              <a key={p.id} href={`#/${p.id}`} aria-current={page === p.id ? "page" : undefined}>
                {p.title}
              </a>
            ))}
          </nav>
        )}
        <div class="top-right">
          <WorkspacePicker value={workspace} options={workspaces} onChoose={chooseWorkspace} />
          {(creds.apiKey || about?.auth_configured) && phase.kind === "ready" && (
            <button type="button" class="small" onClick={signOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {phase.kind === "loading" && <p class="muted pad">Connecting…</p>}
        {phase.kind === "unreachable" && (
          <div class="pad">
            <ErrorBox error={phase.message} onRetry={start} />
          </div>
        )}
        {phase.kind === "login" && <Login accounts={phase.accounts} message={phase.message} onDone={start} />}
        {phase.kind === "ready" && (
          <div key={workspace}>
            {page === "documents" && <DocumentsPage />}
            {page === "graph" && <GraphPage />}
            {page === "retrieval" && <RetrievalPage workspace={workspace} defaults={queryDefaults} />}
          </div>
        )}
      </main>
    </div>
  );
}

function WorkspacePicker({ value, options, onChoose }: { value: string; options: string[]; onChoose: (name: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <form
      class="workspace"
      onSubmit={(event) => {
        event.preventDefault();
        onChoose(text);
      }}
    >
      <label for="workspace">Workspace</label>
      <input
        id="workspace"
        list="workspaces"
        value={text}
        placeholder="server default"
        size={12}
        onInput={(event) => setText(event.currentTarget.value)}
        onChange={(event) => onChoose(event.currentTarget.value)}
      />
      <datalist id="workspaces">
        {options.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
    </form>
  );
}
