// Retrieval: ask questions, read the streamed answer with its references and what was retrieved.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, ndjson, type QueryDefaults } from "./api";
import { renderMarkdown } from "./markdown";
import type { QueryData, Reference } from "./types";
import { Empty, ErrorBox } from "./ui";

const MODES = ["mix", "hybrid", "local", "global", "naive", "bypass"] as const;

type Params = {
  mode: (typeof MODES)[number];
  response_type: string;
  top_k: string;
  chunk_top_k: string;
  max_entity_tokens: string;
  max_relation_tokens: string;
  max_total_tokens: string;
  user_prompt: string;
  history_turns: string;
  bridge: boolean;
  lexical: boolean;
};

const DEFAULTS: Params = {
  mode: "mix",
  response_type: "Multiple Paragraphs",
  top_k: "",
  chunk_top_k: "",
  max_entity_tokens: "",
  max_relation_tokens: "",
  max_total_tokens: "",
  user_prompt: "",
  history_turns: "3",
  bridge: true,
  lexical: true,
};

type Turn = {
  id: number;
  question: string;
  answer: string;
  references: Reference[];
  data: QueryData | null;
  dataError?: string;
  error?: string;
  done: boolean;
  mode: string;
};

const storeKey = (workspace: string) => `lightrag_pg.conversation.${workspace || "default"}`;

function loadTurns(workspace: string): Turn[] {
  try {
    return JSON.parse(localStorage.getItem(storeKey(workspace)) ?? "[]") as Turn[];
  } catch {
    return [];
  }
}

export function RetrievalPage({ workspace, defaults }: { workspace: string; defaults: QueryDefaults | null }) {
  const [turns, setTurns] = useState<Turn[]>(() => loadTurns(workspace));
  const [question, setQuestion] = useState("");
  const [params, setParams] = useState<Params>(DEFAULTS);
  const [running, setRunning] = useState<AbortController | null>(null);
  const end = useRef<HTMLDivElement>(null);

  // the switches start as the server's defaults (/health), unless the user set them before
  // those arrived, and every query sends them
  const touched = useRef(false);
  useEffect(() => {
    if (defaults && !touched.current) setParams((p) => ({ ...p, bridge: defaults.bridge, lexical: defaults.lexical }));
  }, [defaults]);

  useEffect(() => {
    localStorage.setItem(storeKey(workspace), JSON.stringify(turns.filter((t) => t.done).slice(-50)));
  }, [turns, workspace]);
  useEffect(() => end.current?.scrollIntoView?.({ block: "end" }), [turns.length]);

  const patch = (id: number, change: Partial<Turn>) => setTurns((list) => list.map((t) => (t.id === id ? { ...t, ...change } : t)));

  const ask = async () => {
    const text = question.trim();
    if (!text || running) return;
    const turns_ = Number(params.history_turns) || 0;
    const history = turns
      .filter((t) => t.done && !t.error)
      .slice(turns_ > 0 ? -turns_ : turns.length)
      .flatMap((t) => [
        { role: "user", content: t.question },
        { role: "assistant", content: t.answer },
      ]);
    const body: Record<string, unknown> = { query: text, mode: params.mode, include_references: true };
    if (params.response_type) body.response_type = params.response_type;
    for (const key of ["top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens"] as const)
      if (params[key]) body[key] = Number(params[key]);
    if (params.user_prompt) body.user_prompt = params.user_prompt;
    body.bridge = params.bridge;
    body.lexical = params.lexical;
    if (turns_ > 0 && history.length) body.conversation_history = history;

    const id = Date.now();
    setTurns((list) => [...list, { id, question: text, answer: "", references: [], data: null, done: false, mode: params.mode }]);
    setQuestion("");
    const controller = new AbortController();
    setRunning(controller);
    if (params.mode !== "bypass")
      api<QueryData>("POST", "/query/data", { ...body, conversation_history: undefined }, controller.signal)
        .then((data) => patch(id, { data }))
        .catch((e: Error) => patch(id, { dataError: e.message }));
    let answer = "";
    try {
      for await (const line of ndjson("/query/stream", { ...body, stream: true }, controller.signal)) {
        if (Array.isArray(line.references)) patch(id, { references: line.references as Reference[] });
        if (typeof line.response === "string") {
          answer += line.response;
          patch(id, { answer });
        }
        if (typeof line.error === "string") patch(id, { error: line.error });
      }
      patch(id, { done: true });
    } catch (e) {
      const aborted = e instanceof DOMException && e.name === "AbortError";
      if (!(e instanceof ApiError && e.needsLogin))
        patch(id, { done: true, error: aborted ? "Stopped." : (e as Error).message });
    } finally {
      setRunning(null);
    }
  };

  const set = (key: keyof Params) => (e: Event) =>
    setParams((p) => ({ ...p, [key]: (e.currentTarget as HTMLInputElement).value }));
  const toggle = (key: "bridge" | "lexical") => (e: Event) => {
    touched.current = true;
    setParams((p) => ({ ...p, [key]: (e.currentTarget as HTMLInputElement).checked }));
  };

  return (
    <section class="page retrieval" aria-labelledby="retrieval-title">
      <div class="page-head">
        <h1 id="retrieval-title">Retrieval</h1>
        <button type="button" disabled={!turns.length || !!running} onClick={() => setTurns([])}>
          Clear conversation
        </button>
      </div>
      <div class="retrieval-grid">
        <div class="conversation">
          <div class="turns" aria-live="polite">
            {turns.length === 0 && <Empty title="Ask a question about your documents." />}
            {turns.map((turn) => (
              <TurnView key={turn.id} turn={turn} />
            ))}
            <div ref={end} />
          </div>
          <form
            class="ask"
            onSubmit={(e) => {
              e.preventDefault();
              void ask();
            }}
          >
            <label for="question" class="sr-only">
              Question
            </label>
            <textarea
              id="question"
              rows={2}
              placeholder="Ask a question… (Enter to send, Shift+Enter for a new line)"
              value={question}
              onInput={(e) => setQuestion(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.shiftKey) {
                  e.preventDefault();
                  void ask();
                }
              }}
            />
            {running ? (
              <button type="button" onClick={() => running.abort()}>
                Stop
              </button>
            ) : (
              <button type="submit" class="primary" disabled={!question.trim()}>
                Send
              </button>
            )}
          </form>
        </div>
        <details class="params" open={matchMedia?.("(min-width: 900px)").matches}>
          <summary>Query settings</summary>
          <label>
            Mode
            <select value={params.mode} onChange={set("mode")}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label>
            Response format
            <input list="response-types" value={params.response_type} onInput={set("response_type")} />
            <datalist id="response-types">
              <option value="Multiple Paragraphs" />
              <option value="Single Paragraph" />
              <option value="Bullet Points" />
            </datalist>
          </label>
          <label class="check" title="Follow the entities of the best passage to their other passages: helps questions whose answer needs two documents (mix mode)">
            <input type="checkbox" checked={params.bridge} onChange={toggle("bridge")} />
            Bridge (multi-hop, mix mode)
          </label>
          <label class="check" title="Fuse keyword (BM25) search with the vector searches; off gives upstream LightRAG's retrieval order">
            <input type="checkbox" checked={params.lexical} onChange={toggle("lexical")} />
            Keyword search fusion
          </label>
          <NumberField label="Top k" value={params.top_k} onInput={set("top_k")} />
          <NumberField label="Chunk top k" value={params.chunk_top_k} onInput={set("chunk_top_k")} />
          <NumberField label="Max entity tokens" value={params.max_entity_tokens} onInput={set("max_entity_tokens")} />
          <NumberField label="Max relation tokens" value={params.max_relation_tokens} onInput={set("max_relation_tokens")} />
          <NumberField label="Max total tokens" value={params.max_total_tokens} onInput={set("max_total_tokens")} />
          <NumberField label="History turns sent" value={params.history_turns} onInput={set("history_turns")} placeholder="0" />
          <label>
            Extra instructions
            <textarea rows={2} value={params.user_prompt} onInput={set("user_prompt")} />
          </label>
        </details>
      </div>
    </section>
  );
}

function NumberField({ label, value, onInput, placeholder }: { label: string; value: string; onInput: (e: Event) => void; placeholder?: string }) {
  return (
    <label>
      {label}
      <input type="number" min={0} inputMode="numeric" value={value} onInput={onInput} placeholder={placeholder ?? "default"} />
    </label>
  );
}

type Tab = "answer" | "entities" | "relations" | "chunks";

const NO_CONTEXT = "[no-context]";
/** A closing "References" section the LLM wrote (the prompt asks for one); the page lists them itself. */
const REFERENCES_SECTION = /\n\s*(?:#{1,6}\s*|\*\*)References:?(?:\*\*)?:?\s*\n[\s\S]*$/i;

/** The answer as shown: without the LLM's own reference list when the page lists the
 *  references, and without the marker of an answer that found nothing. */
function shownAnswer(turn: Turn): { text: string; noContext: boolean } {
  const noContext = turn.answer.includes(NO_CONTEXT);
  let text = turn.answer.split(NO_CONTEXT).join("").trim();
  if (turn.references.length) text = text.replace(REFERENCES_SECTION, "");
  return { text, noContext };
}

function TurnView({ turn }: { turn: Turn }) {
  const [tab, setTab] = useState<Tab>("answer");
  const answer = shownAnswer(turn);
  const [focusRef, setFocusRef] = useState<string | null>(null);
  const ids = new Set(turn.references.map((r) => r.reference_id));
  const anchor = (ref: string) => `ref-${turn.id}-${ref}`;
  const data = turn.data?.data;
  const openRef = (ref: string) => {
    setFocusRef(ref);
    setTab("chunks");
  };
  const tabs: [Tab, string, number | null][] = [
    ["answer", "Answer", null],
    ["entities", "Entities", data?.entities.length ?? null],
    ["relations", "Relations", data?.relationships.length ?? null],
    ["chunks", "Chunks", data?.chunks.length ?? null],
  ];
  return (
    <article class="turn" data-done={turn.done}>
      <p class="question">
        <span class="sr-only">You asked: </span>
        {turn.question} <span class="muted small">({turn.mode})</span>
      </p>
      <div class="tabs" role="tablist" aria-label="Answer and retrieved data">
        {tabs.map(([id, title, count]) => (
          <button key={id} type="button" role="tab" aria-selected={tab === id} onClick={() => setTab(id)}>
            {title}
            {count !== null && <span class="count">{count}</span>}
          </button>
        ))}
      </div>
      {tab === "answer" && (
        <div role="tabpanel" class="answer">
          {!turn.answer && !turn.done && !turn.error && <p class="muted">Thinking…</p>}
          <div
            class="markdown"
            onClick={(e) => {
              const link = (e.target as HTMLElement).closest("a.cite") as HTMLElement | null;
              if (link?.dataset.ref) {
                e.preventDefault();
                openRef(link.dataset.ref);
              }
            }}
            dangerouslySetInnerHTML={{ __html: renderMarkdown(answer.text, ids, anchor) }}
          />
          {answer.noContext && (
            <p class="muted no-context">
              Nothing in this workspace matched the question. Try other words, another mode, or check that its
              documents are processed.
            </p>
          )}
          <ErrorBox error={turn.error ?? null} />
          {turn.references.length > 0 && (
            <div class="references">
              <h3>References</h3>
              <ol>
                {turn.references.map((r) => (
                  <li key={r.reference_id} id={anchor(r.reference_id)}>
                    <button type="button" class="link" onClick={() => openRef(r.reference_id)}>
                      [{r.reference_id}] {r.file_path}
                    </button>
                  </li>
                ))}
              </ol>
            </div>
          )}
        </div>
      )}
      {tab !== "answer" && (
        <div role="tabpanel" class="retrieved">
          {turn.dataError && <ErrorBox error={turn.dataError} />}
          {!data && !turn.dataError && <p class="muted">Loading…</p>}
          {data && tab === "entities" && (
            <Rows rows={data.entities} columns={["entity_name", "entity_type", "description", "file_path"]} empty="No entities retrieved." />
          )}
          {data && tab === "relations" && (
            <Rows rows={data.relationships} columns={["src_id", "tgt_id", "keywords", "description", "weight"]} empty="No relations retrieved." />
          )}
          {data && tab === "chunks" && (
            <ol class="chunks">
              {data.chunks.length === 0 && <Empty title="No chunks retrieved." />}
              {data.chunks.map((chunk, i) => {
                const ref = String(chunk.reference_id ?? "");
                return (
                  <li key={i} class={focusRef && ref === focusRef ? "highlight" : ""}>
                    <p class="small muted">
                      [{ref}] {String(chunk.file_path ?? "")}
                    </p>
                    <p class="chunk-text">{String(chunk.content ?? "")}</p>
                  </li>
                );
              })}
            </ol>
          )}
        </div>
      )}
    </article>
  );
}

function Rows({ rows, columns, empty }: { rows: Record<string, unknown>[]; columns: string[]; empty: string }) {
  if (!rows.length) return <Empty title={empty} />;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c.replace(/_/g, " ")}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c}>{row[c] === undefined || row[c] === null ? "" : String(row[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
