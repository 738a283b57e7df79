// The drawing: cytoscape.js on a 2D canvas, fcose force layout, colour by type, size by degree.
import cytoscape, { type Core, type ElementDefinition } from "cytoscape";
import fcose from "cytoscape-fcose";
import type { KnowledgeGraph } from "./types";

cytoscape.use(fcose);

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#8cd17d"];
const typeColours = new Map<string, string>();

/** One colour per entity type, stable for the page's life. */
export function colourOf(type: string): string {
  const key = (type || "unknown").toLowerCase();
  if (!typeColours.has(key)) typeColours.set(key, PALETTE[typeColours.size % PALETTE.length]);
  return typeColours.get(key)!;
}

export type Selection = { kind: "node" | "edge"; id: string } | null;

export class GraphView {
  readonly cy: Core;

  constructor(container: HTMLElement, onSelect: (selection: Selection) => void) {
    this.cy = cytoscape({
      container,
      wheelSensitivity: 0.3,
      minZoom: 0.05,
      maxZoom: 6,
      hideEdgesOnViewport: true,
      textureOnViewport: true,
      style: [
        {
          selector: "node",
          style: {
            "background-color": "data(colour)",
            width: "data(size)",
            height: "data(size)",
            label: "data(id)",
            "font-size": 10,
            color: "#222",
            "text-valign": "bottom",
            "text-margin-y": 2,
            "text-outline-color": "#fff",
            "text-outline-width": 2,
            "min-zoomed-font-size": 7,
          },
        },
        {
          selector: "edge",
          style: {
            width: "data(width)",
            "line-color": "#b8bec8",
            "curve-style": "haystack",
            opacity: 0.8,
          },
        },
        { selector: "node:selected", style: { "border-width": 4, "border-color": "#111" } },
        { selector: "edge:selected", style: { "line-color": "#e15759", width: 4, opacity: 1 } },
        { selector: ".faded", style: { opacity: 0.2 } },
      ],
    });
    this.cy.on("tap", "node", (e) => onSelect({ kind: "node", id: e.target.id() }));
    this.cy.on("tap", "edge", (e) => onSelect({ kind: "edge", id: e.target.id() }));
    this.cy.on("tap", (e) => {
      if (e.target === this.cy) onSelect(null);
    });
  }

  /** Draw ``graph``; with ``add`` the nodes join those already drawn. */
  show(graph: KnowledgeGraph, add = false): void {
    const large = graph.nodes.length + (add ? this.cy.nodes().length : 0) > 400;
    this.cy.batch(() => {
      if (!add) this.cy.elements().remove();
      const elements: ElementDefinition[] = [];
      for (const node of graph.nodes) {
        if (this.cy.getElementById(node.id).nonempty()) continue;
        elements.push({ group: "nodes", data: { id: node.id, type: String(node.properties.entity_type ?? ""), props: node.properties } });
      }
      this.cy.add(elements);
      const edges: ElementDefinition[] = [];
      for (const edge of graph.edges) {
        if (this.cy.getElementById(edge.id).nonempty()) continue;
        if (this.cy.getElementById(edge.source).empty() || this.cy.getElementById(edge.target).empty()) continue;
        const weight = Number(edge.properties.weight ?? 1);
        edges.push({
          group: "edges",
          data: { id: edge.id, source: edge.source, target: edge.target, props: edge.properties, width: Math.min(1 + Math.log1p(weight), 6) },
        });
      }
      this.cy.add(edges);
      const maxDegree = Math.max(1, ...this.cy.nodes().map((n) => n.degree(false)));
      this.cy.nodes().forEach((n) => {
        n.data("colour", colourOf(n.data("type")));
        n.data("size", 12 + 36 * Math.sqrt(n.degree(false) / maxDegree));
      });
      this.cy
        .style()
        .selector("edge")
        .style("curve-style", large ? "haystack" : "straight")
        .selector("node")
        .style("min-zoomed-font-size", large ? 14 : 7)
        .update();
    });
    this.layout(large);
  }

  layout(large: boolean): void {
    this.cy
      .layout({
        name: "fcose",
        quality: large ? "draft" : "default",
        animate: !large,
        animationDuration: 500,
        randomize: true,
        nodeRepulsion: () => 6000,
        idealEdgeLength: () => 70,
        numIter: large ? 1200 : 2500,
        fit: true,
        padding: 30,
      } as cytoscape.LayoutOptions)
      .run();
  }

  select(selection: Selection): void {
    this.cy.elements().unselect();
    if (selection) this.cy.getElementById(selection.id).select();
  }

  zoom(factor: number): void {
    const { width, height } = this.cy.container()!.getBoundingClientRect();
    this.cy.zoom({ level: this.cy.zoom() * factor, renderedPosition: { x: width / 2, y: height / 2 } });
  }

  fit(): void {
    this.cy.fit(undefined, 30);
  }

  destroy(): void {
    this.cy.destroy();
  }
}
