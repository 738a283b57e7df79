// Records a hash of the UI's sources next to the built assets, so a test can tell
// whether the committed build is current. tests/test_webui_build.py computes the same hash.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const SOURCES = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "src", "public"];

function files(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

const paths = SOURCES.flatMap((name) => files(join(root, name)))
  .map((p) => relative(root, p).split(sep).join("/"))
  .sort();
const hash = createHash("sha256");
for (const path of paths) {
  hash.update(path + "\0");
  hash.update(readFileSync(join(root, path)));
  hash.update("\0");
}
const out = join(root, "..", "lightrag_pg", "server", "static", "webui", "SOURCE_HASH");
writeFileSync(out, hash.digest("hex") + "\n");
console.log(`stamped ${paths.length} source files into ${relative(process.cwd(), out)}`);
