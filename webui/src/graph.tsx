// Knowledge graph: label search, the drawing, and a side panel to read and fix what was clicked.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "./api";
import { GraphView, colourOf, type Selection } from "./graphview";
import { LabelSearch } from "./labelsearch";
import type { KnowledgeGraph } from "./types";
import { Confirm, Empty, ErrorBox } from "./ui";

const SEP = "<SEP>";
/** New neighbours each node adds to a drawing, heaviest relations first; "Show more" adds as many again. */
const NEIGHBOURS = 20;

declare global {
  interface Window {
    lightragGraph?: GraphView;
  }
}

export function GraphPage() {
  const container = useRef<HTMLDivElement>(null);
  const view = useRef<GraphView | null>(null);
  const [label, setLabel] = useState("");
  const [depth, setDepth] = useState(2);
  const [maxNodes, setMaxNodes] = useState(1000);
  const [popular, setPopular] = useState<string[] | null>(null);
  const [graph, setGraph] = useState<KnowledgeGraph | null>(null);
  const [selection, setSelection] = useState<Selection>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [version, setVersion] = useState(0);
  const caps = useRef(new Map<string, number>());

  useEffect(() => {
    if (!container.current) return;
    const v = new GraphView(container.current, setSelection);
    view.current = v;
    window.lightragGraph = v;
    return () => {
      v.destroy();
      view.current = null;
      delete window.lightragGraph;
    };
  }, []);

  const loadPopular = () =>
    api<string[]>("GET", "/graph/label/popular?limit=30")
      .then(setPopular)
      .catch((e: Error) => setError(e.message));
  useEffect(() => {
    void loadPopular();
  }, []);

  const fetchGraph = async (name: string, hops: number, neighbours: number) =>
    api<KnowledgeGraph>(
      "GET",
      `/graphs?label=${encodeURIComponent(name)}&max_depth=${hops}&max_nodes=${maxNodes}&max_neighbours=${neighbours}`,
    );

  const show = async (name: string) => {
    if (!name) return;
    setLabel(name);
    setLoading(true);
    setError(null);
    setSelection(null);
    try {
      const found = await fetchGraph(name, depth, NEIGHBOURS);
      caps.current.clear();
      setGraph(found);
      view.current?.show(found);
      setVersion((n) => n + 1);
    } catch (e) {
      if (!(e instanceof ApiError && e.needsLogin)) setError((e as Error).message);
    } finally {
      setLoading(false);
    }
  };

  const expand = async (name: string) => {
    const cap = (caps.current.get(name) ?? NEIGHBOURS) + NEIGHBOURS;
    caps.current.set(name, cap);
    try {
      const more = await fetchGraph(name, 1, cap);
      view.current?.show(more, true);
      setVersion((n) => n + 1);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  /** After an edit: draw again around ``root`` (the edited entity's new name if the root changed). */
  const redraw = async (root: string, message: string) => {
    await show(root);
    void loadPopular();
    setNotice(message);
  };
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => view.current?.select(selection), [selection]);

  const nodes = view.current?.cy.nodes().length ?? 0;
  const types = graph ? [...new Set(graph.nodes.map((n) => String(n.properties.entity_type ?? "unknown")))].slice(0, 12) : [];

  return (
    <section class="page graph-page" aria-labelledby="graph-title">
      <div class="page-head">
        <h1 id="graph-title">Knowledge graph</h1>
        <div class="row wrap graph-tools">
          <LabelSearch label="Search an entity" placeholder="Search an entity…" onPick={show} />
          <label>
            Depth{" "}
            <select value={depth} onChange={(e) => setDepth(Number(e.currentTarget.value))}>
              {[1, 2, 3, 4].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <label>
            Max nodes{" "}
            <select value={maxNodes} onChange={(e) => setMaxNodes(Number(e.currentTarget.value))}>
              {[100, 300, 1000, 2000].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => show("*")}>
            Whole graph
          </button>
        </div>
      </div>
      {popular && popular.length > 0 && (
        <div class="popular" aria-label="Popular entities">
          <span class="muted small">Popular:</span>
          {popular.slice(0, 15).map((name) => (
            <button key={name} type="button" class="chip" onClick={() => show(name)}>
              {name}
            </button>
          ))}
        </div>
      )}
      <ErrorBox error={error} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <div class="graph-area">
        <div class="graph-canvas-wrap">
          <div ref={container} class="graph-canvas" data-nodes={nodes} data-version={version} aria-label={`Graph of ${label || "nothing yet"}: ${nodes} nodes`} role="img" />
          {!graph && !loading && (
            <div class="graph-overlay">
              <Empty title={popular && popular.length === 0 ? "The graph is empty — upload documents first." : "Search an entity or pick a popular one to draw its neighbourhood."} />
            </div>
          )}
          {graph && graph.nodes.length === 0 && (
            <div class="graph-overlay">
              <Empty title={`No entity named “${label}”.`} />
            </div>
          )}
          {loading && <div class="graph-overlay muted">Loading…</div>}
          {graph && graph.nodes.length > 0 && (
            <div class="graph-controls">
              <button type="button" class="small" onClick={() => view.current?.zoom(1.3)} aria-label="Zoom in">
                +
              </button>
              <button type="button" class="small" onClick={() => view.current?.zoom(1 / 1.3)} aria-label="Zoom out">
                −
              </button>
              <button type="button" class="small" onClick={() => view.current?.fit()}>
                Fit
              </button>
            </div>
          )}
          {graph && (
            <p class="graph-info small muted">
              {nodes} nodes{graph.is_truncated ? " (truncated)" : ""}
              {types.map((t) => (
                <span key={t} class="legend">
                  <span class="dot" style={{ background: colourOf(t) }} />
                  {t}
                </span>
              ))}
            </p>
          )}
        </div>
        {selection && view.current && (
          <Panel
            key={`${selection.kind}:${selection.id}:${version}`}
            view={view.current}
            selection={selection}
            onClose={() => setSelection(null)}
            onExpand={expand}
            onChanged={(newRoot, message) => redraw(newRoot === null ? label : newRoot, message)}
            root={label}
          />
        )}
      </div>
    </section>
  );
}

/** Where an entity or relation comes from: its files, then its chunk ids folded away. */
function Sources({ files, chunks }: { files: unknown; chunks: unknown }) {
  const list = (value: unknown) => [...new Set(String(value ?? "").split(SEP).filter(Boolean))];
  const names = list(files);
  const ids = list(chunks);
  if (!names.length && !ids.length) return null;
  return (
    <div class="field">
      <dt>Sources</dt>
      <dd>
        {names.map((name) => (
          <div key={name}>{name}</div>
        ))}
        {ids.length > 0 && (
          <details class="chunk-ids">
            <summary class="small muted">{ids.length === 1 ? "1 chunk" : `${ids.length} chunks`}</summary>
            {ids.map((id) => (
              <div key={id} class="small muted">
                {id}
              </div>
            ))}
          </details>
        )}
      </dd>
    </div>
  );
}

function Field({ name, value }: { name: string; value: unknown }) {
  if (value === undefined || value === null || value === "") return null;
  const text = String(value);
  return (
    <div class="field">
      <dt>{name}</dt>
      <dd>{text.includes(SEP) ? text.split(SEP).map((part, i) => <div key={i}>{part}</div>) : text}</dd>
    </div>
  );
}

type Mode = "view" | "edit" | "rename" | "merge";

function Panel({
  view,
  selection,
  root,
  onClose,
  onExpand,
  onChanged,
}: {
  view: GraphView;
  selection: NonNullable<Selection>;
  root: string;
  onClose: () => void;
  onExpand: (name: string) => void;
  onChanged: (newRoot: string | null, message: string) => void;
}) {
  const element = view.cy.getElementById(selection.id);
  const props = (element.data("props") ?? {}) as Record<string, unknown>;
  const shown = element.degree(false);
  const stored = Math.max(shown, Number(props.degree ?? shown));
  const [mode, setMode] = useState<Mode>("view");
  const [error, setError] = useState<string | null>(null);
  const [description, setDescription] = useState(String(props.description ?? ""));
  const [type, setType] = useState(String(props.entity_type ?? ""));
  const [newName, setNewName] = useState(selection.id);
  const [target, setTarget] = useState("");
  const [deleting, setDeleting] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const run = async (work: () => Promise<unknown>, newRoot: string | null, message: string) => {
    setError(null);
    try {
      await work();
      onChanged(newRoot, message);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const name = selection.id;
  const rootAfter = (replacement: string | null) => (root === name ? replacement : null);

  if (selection.kind === "edge") {
    return (
      <aside class="panel" aria-labelledby="panel-title">
        <div class="row between">
          <h2 id="panel-title" tabIndex={-1} ref={heading}>
            {String(element.data("source"))} → {String(element.data("target"))}
          </h2>
          <button type="button" class="small" onClick={onClose} aria-label="Close panel">
            ×
          </button>
        </div>
        <dl>
          <Field name="Description" value={props.description} />
          <Field name="Keywords" value={props.keywords} />
          <Field name="Weight" value={props.weight} />
          <Sources files={props.file_path} chunks={props.source_id} />
        </dl>
      </aside>
    );
  }

  return (
    <aside class="panel" aria-labelledby="panel-title">
      <div class="row between">
        <h2 id="panel-title" tabIndex={-1} ref={heading}>
          <span class="dot" style={{ background: colourOf(String(props.entity_type ?? "")) }} /> {name}
        </h2>
        <button type="button" class="small" onClick={onClose} aria-label="Close panel">
          ×
        </button>
      </div>
      {mode === "view" && (
        <>
          <dl>
            <Field name="Type" value={props.entity_type} />
            <Field name="Relations" value={shown < stored ? `${shown} shown of ${stored}` : stored} />
            <Field name="Description" value={props.description} />
            <Sources files={props.file_path} chunks={props.source_id} />
          </dl>
          <div class="row wrap">
            {shown < stored && (
              <button type="button" onClick={() => onExpand(name)}>
                Show more neighbours ({stored - shown} hidden)
              </button>
            )}
            <button type="button" onClick={() => setMode("edit")}>
              Edit
            </button>
            <button type="button" onClick={() => setMode("rename")}>
              Rename
            </button>
            <button type="button" onClick={() => setMode("merge")}>
              Merge into…
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete
            </button>
          </div>
        </>
      )}
      {mode === "edit" && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void run(
              () => api("POST", "/graph/entity/edit", { entity_name: name, updated_data: { description, entity_type: type } }),
              rootAfter(name),
              `Updated “${name}”.`,
            );
          }}
        >
          <label>
            Type
            <input value={type} onInput={(e) => setType(e.currentTarget.value)} />
          </label>
          <label>
            Description
            <textarea rows={6} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
          <FormButtons action="Save" onCancel={() => setMode("view")} />
        </form>
      )}
      {mode === "rename" && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            const renamed = newName.trim();
            if (!renamed || renamed === name) return;
            void run(
              () =>
                api("POST", "/graph/entity/edit", {
                  entity_name: name,
                  updated_data: { entity_name: renamed },
                  allow_rename: true,
                }),
              rootAfter(renamed),
              `Renamed “${name}” to “${renamed}”.`,
            );
          }}
        >
          <label>
            New name
            <input name="new-name" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} autofocus />
          </label>
          <FormButtons action="Rename" onCancel={() => setMode("view")} />
        </form>
      )}
      {mode === "merge" && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            const into = target.trim();
            if (!into || into === name) return;
            void run(
              () => api("POST", "/graph/entities/merge", { entities_to_change: [name], entity_to_change_into: into }),
              rootAfter(into),
              `Merged “${name}” into “${into}”.`,
            );
          }}
        >
          <p class="muted small">Its relations and descriptions move to the entity you pick; “{name}” disappears.</p>
          <LabelSearch label="Merge into entity" placeholder="Entity to merge into…" onPick={setTarget} onText={setTarget} />
          <FormButtons action="Merge" onCancel={() => setMode("view")} />
        </form>
      )}
      <ErrorBox error={error} />
      <Confirm
        open={deleting}
        title="Delete entity"
        message={`Delete “${name}” and its relations from the graph?`}
        action="Delete"
        danger
        onConfirm={() => {
          setDeleting(false);
          void run(() => api("DELETE", "/graph/entity/delete", { entity_name: name }), rootAfter("*"), `Deleted “${name}”.`);
        }}
        onCancel={() => setDeleting(false)}
      />
    </aside>
  );
}

function FormButtons({ action, onCancel }: { action: string; onCancel: () => void }) {
  return (
    <div class="row end">
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      <button type="submit" class="primary">
        {action}
      </button>
    </div>
  );
}
