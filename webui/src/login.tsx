// Sign-in: an API key (X-API-Key) and, when the server has accounts, a user name and password.
import { useState } from "preact/hooks";
import { ApiError, api, creds } from "./api";
import { ErrorBox } from "./ui";

export function Login({ accounts, message, onDone }: { accounts: boolean; message: string; onDone: () => void }) {
  const [apiKey, setApiKey] = useState(creds.apiKey);
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(message || null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    creds.apiKey = apiKey.trim();
    try {
      if (accounts && user) {
        const form = new URLSearchParams({ username: user, password });
        const answer = await api<{ access_token: string }>("POST", "/login", form);
        creds.token = answer.access_token;
      }
      onDone();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="login card" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title">Sign in</h1>
      <p class="muted">This server needs credentials{accounts ? ": your account, or its API key" : ": its API key"}.</p>
      {accounts && (
        <>
          <label>
            User name
            <input name="username" autocomplete="username" value={user} onInput={(e) => setUser(e.currentTarget.value)} />
          </label>
          <label>
            Password
            <input
              name="password"
              type="password"
              autocomplete="current-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
        </>
      )}
      <label>
        API key
        <input
          name="api-key"
          type="password"
          autocomplete="off"
          value={apiKey}
          onInput={(e) => setApiKey(e.currentTarget.value)}
          autofocus
        />
      </label>
      <ErrorBox error={error} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
