import { defineConfig } from "vite";

// Built into the Python package, served by `lightrag-pg serve` at /webui.
export default defineConfig({
  base: "/webui/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../lightrag_pg/server/static/webui",
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 800,
    sourcemap: false,
  },
  server: {
    proxy: Object.fromEntries(
      ["/documents", "/query", "/graphs", "/graph", "/auth-status", "/login", "/health"].map((p) => [
        p,
        "http://127.0.0.1:9621",
      ]),
    ),
  },
});
