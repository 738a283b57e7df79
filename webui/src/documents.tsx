// Documents: drag-and-drop upload with live status, the paged table, deletes and retries.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, upload } from "./api";
import type { Doc, DocsPage, PipelineStatus, TrackStatus, Usage } from "./types";
import { Badge, Confirm, Empty, ErrorBox, formatDate } from "./ui";

const FILTERS = ["all", "processed", "processing", "pending", "failed"] as const;
type Filter = (typeof FILTERS)[number];
type SortField = "file_path" | "created_at" | "updated_at" | "id";
const ACTIVE = new Set(["pending", "processing", "preprocessed"]);

type Upload = { key: string; name: string; stage: string; progress: number; error?: string; trackId?: string };

export function DocumentsPage() {
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(20);
  const [filter, setFilter] = useState<Filter>("all");
  const [sort, setSort] = useState<{ field: SortField; direction: "asc" | "desc" }>({ field: "updated_at", direction: "desc" });
  const [data, setData] = useState<DocsPage | null>(null);
  const [pipeline, setPipeline] = useState<PipelineStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [deleting, setDeleting] = useState<Doc | null>(null);
  const [deleteFile, setDeleteFile] = useState(false);
  const [clearing, setClearing] = useState(false);
  const [removing, setRemoving] = useState<string[]>([]);

  const load = useCallback(async () => {
    try {
      const body = {
        page,
        page_size: pageSize,
        sort_field: sort.field,
        sort_direction: sort.direction,
        status_filter: filter === "all" ? null : filter,
      };
      const [docs, status] = await Promise.all([
        api<DocsPage>("POST", "/documents/paginated", body),
        api<PipelineStatus>("GET", "/documents/pipeline_status"),
      ]);
      setData(docs);
      setPipeline(status);
      setError(null);
    } catch (e) {
      if (!(e instanceof ApiError && e.needsLogin)) setError((e as Error).message);
    }
  }, [page, pageSize, filter, sort]);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    if (data && removing.length) setRemoving((ids) => ids.filter((id) => data.documents.some((d) => d.id === id)));
  }, [data]);
  const busy =
    removing.length > 0 ||
    pipeline?.busy ||
    uploads.some((u) => !["processed", "failed"].includes(u.stage)) ||
    data?.documents.some((d) => ACTIVE.has(d.status));
  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(load, 1000);
    return () => clearInterval(timer);
  }, [busy, load]);

  const patch = (key: string, change: Partial<Upload>) =>
    setUploads((list) => list.map((u) => (u.key === key ? { ...u, ...change } : u)));

  const follow = async (key: string, trackId: string) => {
    for (let i = 0; i < 3600; i++) {
      try {
        const track = await api<TrackStatus>("GET", `/documents/track_status/${encodeURIComponent(trackId)}`);
        const doc = track.documents[0];
        if (doc) {
          patch(key, { stage: doc.status, error: doc.error_msg ?? undefined });
          if (doc.status === "processed" || doc.status === "failed") {
            void load();
            return;
          }
        }
      } catch (e) {
        patch(key, { stage: "failed", error: (e as Error).message });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
  };

  const addFiles = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const key = `${file.name}-${Date.now()}-${Math.random()}`;
      setUploads((list) => [{ key, name: file.name, stage: "uploading", progress: 0 }, ...list]);
      upload(file, (progress) => patch(key, { progress }))
        .then((answer) => {
          patch(key, { stage: "pending", progress: 1, trackId: answer.track_id });
          void load();
          return follow(key, answer.track_id);
        })
        .catch((e: Error) => patch(key, { stage: "failed", error: e.message }));
    }
  };

  const act = async (run: () => Promise<{ message?: string }>) => {
    try {
      const answer = await run();
      setNotice(answer.message ?? "Done");
      setError(null);
      void load();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const confirmDelete = async () => {
    const doc = deleting;
    setDeleting(null);
    if (!doc) return;
    setRemoving((ids) => [...ids, doc.id]);
    setTimeout(() => setRemoving((ids) => ids.filter((id) => id !== doc.id)), 60_000);
    await act(() =>
      api("DELETE", "/documents/delete_document", { doc_ids: [doc.id], delete_file: deleteFile, delete_llm_cache: false }),
    );
  };

  const toggleSort = (field: SortField) =>
    setSort((s) => ({ field, direction: s.field === field && s.direction === "desc" ? "asc" : "desc" }));
  const counts = data?.status_counts ?? {};
  const docs = data?.documents ?? [];
  const total = data?.pagination.total_pages ?? 1;

  return (
    <section class="page" aria-labelledby="docs-title">
      <div class="page-head">
        <h1 id="docs-title">Documents</h1>
        <div class="row wrap">
          <button type="button" onClick={load}>
            Refresh
          </button>
          <button
            type="button"
            disabled={!counts.failed}
            onClick={() => act(() => api("POST", "/documents/reprocess_failed"))}
          >
            Reprocess failed{counts.failed ? ` (${counts.failed})` : ""}
          </button>
          <button type="button" onClick={() => setClearing(true)}>
            Clear cache
          </button>
        </div>
      </div>
      <DropZone onFiles={addFiles} />
      {uploads.length > 0 && <UploadList uploads={uploads} onClear={() => setUploads((l) => l.filter((u) => !["processed", "failed"].includes(u.stage)))} />}
      {pipeline?.busy && (
        <p class="status-line" role="status">
          <span class="spinner" aria-hidden="true" /> Indexing: {pipeline.latest_message || pipeline.job_name}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}{" "}
          <button type="button" class="link" onClick={() => setNotice(null)} aria-label="Dismiss">
            ×
          </button>
        </p>
      )}
      <ErrorBox error={error} onRetry={load} />
      <div class="tabs" role="group" aria-label="Filter by status">
        {FILTERS.map((f) => (
          <button
            key={f}
            type="button"
            aria-pressed={filter === f}
            onClick={() => {
              setFilter(f);
              setPage(1);
            }}
          >
            {f} <span class="count">{counts[f] ?? 0}</span>
          </button>
        ))}
      </div>
      {data && docs.length === 0 ? (
        <Empty title={filter === "all" ? "No documents yet — upload one." : `No ${filter} documents.`}>
          {filter === "all" && <p class="muted">Drop files above or choose them; .txt, .md, .pdf, .docx, .pptx, .xlsx, .html, .csv.</p>}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="docs">
            <caption class="sr-only">Documents, page {page} of {total}</caption>
            <thead>
              <tr>
                <SortHeader field="file_path" label="File" sort={sort} onSort={toggleSort} />
                <th scope="col">Status</th>
                <th scope="col">Summary</th>
                <th scope="col" class="num">Chunks</th>
                <th scope="col" class="num" title="LLM tokens the document's indexing used (input + output)">
                  Tokens
                </th>
                <th scope="col" class="num">Length</th>
                <SortHeader field="created_at" label="Created" sort={sort} onSort={toggleSort} />
                <SortHeader field="updated_at" label="Updated" sort={sort} onSort={toggleSort} />
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {docs.map((doc) => (
                <DocRow key={doc.id} doc={doc} onDelete={() => setDeleting(doc)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager row wrap" aria-label="Pages of documents">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page} of {Math.max(total, 1)} · {data?.pagination.total_count ?? 0} documents
        </span>
        <button type="button" disabled={page >= total} onClick={() => setPage(page + 1)}>
          Next
        </button>
        <label>
          Per page{" "}
          <select
            value={pageSize}
            onChange={(e) => {
              setPageSize(Number(e.currentTarget.value));
              setPage(1);
            }}
          >
            {[10, 20, 50, 100, 200].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </nav>
      <Confirm
        open={deleting !== null}
        title="Delete document"
        message={`Delete “${deleting?.file_path}” and everything extracted from it? This cannot be undone.`}
        action="Delete"
        danger
        onConfirm={confirmDelete}
        onCancel={() => setDeleting(null)}
      >
        <label class="check">
          <input type="checkbox" checked={deleteFile} onChange={(e) => setDeleteFile(e.currentTarget.checked)} /> Also delete
          the file from the input folder
        </label>
      </Confirm>
      <Confirm
        open={clearing}
        title="Clear the LLM cache"
        message="Delete every cached LLM answer of this workspace? Documents and the graph are kept."
        action="Clear cache"
        danger
        onConfirm={() => {
          setClearing(false);
          void act(() => api("POST", "/documents/clear_cache", {}));
        }}
        onCancel={() => setClearing(false)}
      />
    </section>
  );
}

function SortHeader({
  field,
  label,
  sort,
  onSort,
}: {
  field: SortField;
  label: string;
  sort: { field: SortField; direction: string };
  onSort: (field: SortField) => void;
}) {
  const active = sort.field === field;
  return (
    <th scope="col" aria-sort={active ? (sort.direction === "asc" ? "ascending" : "descending") : "none"}>
      <button type="button" class="sort" onClick={() => onSort(field)}>
        {label} <span aria-hidden="true">{active ? (sort.direction === "asc" ? "▲" : "▼") : "↕"}</span>
      </button>
    </th>
  );
}

function DocRow({ doc, onDelete }: { doc: Doc; onDelete: () => void }) {
  const { entities_count: entities, relations_count: relations } = doc;
  return (
    <tr data-doc-id={doc.id} data-status={doc.status}>
      <td class="file">
        <span class="name">{doc.file_path}</span>
        <span class="muted mono small">{doc.id}</span>
      </td>
      <td>
        <Badge status={doc.status} />
        {doc.status === "failed" && doc.error_msg && <p class="doc-error">{doc.error_msg}</p>}
      </td>
      <td class="summary">{doc.content_summary}</td>
      <td class="num">
        {doc.chunks_count ?? "—"}
        {entities !== undefined && (
          <span
            class="muted small counts"
            title="entities / relations"
            aria-label={`${entities} entities, ${relations ?? 0} relations`}
          >
            {" "}
            · {entities}/{relations ?? "—"}
          </span>
        )}
      </td>
      <td class="num">
        <UsageCell usage={usageOf(doc)} />
      </td>
      <td class="num">{doc.content_length.toLocaleString()}</td>
      <td class="date">{formatDate(doc.created_at)}</td>
      <td class="date">{formatDate(doc.updated_at)}</td>
      <td>
        <button type="button" class="small danger" onClick={onDelete} aria-label={`Delete ${doc.file_path}`}>
          Delete
        </button>
      </td>
    </tr>
  );
}

/** The `usage` totals of a document's status metadata, when it has them. */
function usageOf(doc: Doc): Usage | undefined {
  const usage = doc.metadata?.usage as Partial<Usage> | undefined;
  return usage && typeof usage.input_tokens === "number" ? (usage as Usage) : undefined;
}

function UsageCell({ usage }: { usage: Usage | undefined }) {
  if (!usage) return <span class="muted">—</span>;
  const total = usage.input_tokens + usage.output_tokens;
  const detail =
    `${usage.llm_calls} LLM calls: ${usage.input_tokens.toLocaleString()} input and ` +
    `${usage.output_tokens.toLocaleString()} output tokens; ${usage.cache_hits} answered from the cache; ` +
    `${usage.embed_tokens.toLocaleString()} embedding tokens`;
  return (
    <span class="usage" title={detail} aria-label={detail}>
      {total.toLocaleString()}
    </span>
  );
}

function DropZone({ onFiles }: { onFiles: (files: FileList) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  return (
    <div
      class={`dropzone${over ? " over" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        if (e.dataTransfer?.files.length) onFiles(e.dataTransfer.files);
      }}
    >
      <p>Drop files here to upload them, or</p>
      <button type="button" class="primary" onClick={() => input.current?.click()}>
        Choose files
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="file-input"
        accept=".txt,.md,.pdf,.docx,.pptx,.xlsx,.html,.htm,.csv"
        onChange={(e) => {
          const files = e.currentTarget.files;
          if (files?.length) onFiles(files);
          e.currentTarget.value = "";
        }}
      />
    </div>
  );
}

function UploadList({ uploads, onClear }: { uploads: Upload[]; onClear: () => void }) {
  return (
    <section class="uploads" aria-label="Uploads">
      <div class="row between">
        <h2>Uploads</h2>
        <button type="button" class="small" onClick={onClear}>
          Clear finished
        </button>
      </div>
      <ul aria-live="polite">
        {uploads.map((u) => (
          <li key={u.key} data-stage={u.stage}>
            <span class="name">{u.name}</span>
            {u.stage === "uploading" ? (
              <progress max={1} value={u.progress} aria-label={`Uploading ${u.name}`} />
            ) : (
              <Badge status={u.stage} />
            )}
            {u.error && <span class="doc-error">{u.error}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}
