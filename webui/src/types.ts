// The server's JSON shapes (LightRAG Server 1.5's).

export type DocStatus = "pending" | "processing" | "preprocessed" | "processed" | "failed";

export type Doc = {
  id: string;
  content_summary: string;
  content_length: number;
  status: DocStatus;
  created_at: string;
  updated_at: string;
  track_id: string | null;
  chunks_count: number | null;
  /** On /documents/paginated rows: how many entities and relations the document contributed. */
  entities_count?: number;
  relations_count?: number;
  error_msg: string | null;
  metadata: Record<string, unknown> | null;
  file_path: string;
};

/** A document's LLM and embedding calls, in its status metadata (`metadata.usage`). */
export type Usage = {
  llm_calls: number;
  cache_hits: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  embed_calls: number;
  embed_tokens: number;
};

export type DocsPage = {
  documents: Doc[];
  pagination: { page: number; page_size: number; total_count: number; total_pages: number };
  status_counts: Record<string, number>;
};

export type TrackStatus = { track_id: string; documents: Doc[]; total_count: number };

export type PipelineStatus = { busy: boolean; latest_message?: string; job_name?: string };

export type GraphNode = { id: string; labels: string[]; properties: Record<string, unknown> };
export type GraphEdge = {
  id: string;
  type: string;
  source: string;
  target: string;
  properties: Record<string, unknown>;
};
export type KnowledgeGraph = { nodes: GraphNode[]; edges: GraphEdge[]; is_truncated: boolean };

export type Reference = { reference_id: string; file_path: string; content?: string[] };

export type QueryData = {
  status: string;
  message: string;
  data: {
    entities: Record<string, unknown>[];
    relationships: Record<string, unknown>[];
    chunks: Record<string, unknown>[];
    references: Reference[];
  };
};
