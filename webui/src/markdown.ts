// Markdown to safe HTML; citations like [1] become links to the answer's references.
import DOMPurify from "dompurify";
import { marked } from "marked";

marked.setOptions({ gfm: true, breaks: true });

export function renderMarkdown(text: string, referenceIds: Set<string>, anchor: (id: string) => string): string {
  const html = marked.parse(text, { async: false }) as string;
  const linked = html.replace(/\[(\d+)\](?![^<]*<\/a>)/g, (match, id: string) =>
    referenceIds.has(id) ? `<a href="#${anchor(id)}" class="cite" data-ref="${id}">[${id}]</a>` : match,
  );
  return DOMPurify.sanitize(linked, { ADD_ATTR: ["data-ref"] });
}
