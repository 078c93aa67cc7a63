// Calls the /v3 assistant through the Vercel AI SDK's Chat Completions
// form, openai.chat("switchyard-demo"): asks for a chart, reads the /v3
// keys of the chunks (activity, artifacts) and the cost from the raw
// chunks, and downloads the chart by its file_id. docs/clients.md shows
// it; the e2e tests run it against the real binary.
//
//   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... node chat.mjs
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

const openai = createOpenAI({
  baseURL: `${process.env.SWITCHYARD_BASE_URL}/v3`,
  apiKey: process.env.SWITCHYARD_KEY,
  headers: { "X-Include-Cost": "1" }, // usage.cost_cents
});

const result = streamText({
  model: openai.chat("switchyard-demo"),
  prompt: "Draw a chart of quarterly revenue",
  includeRawChunks: true, // each chat chunk as it came, /v3 keys included
});
let text = "";
const fileIds = [];
for await (const part of result.fullStream) {
  if (part.type === "text-delta") text += part.text;
  if (part.type === "error") throw part.error;
  if (part.type !== "raw") continue;
  const chunk = part.rawValue;
  const delta = chunk.choices?.[0]?.delta ?? {};
  for (const key of ["act", "artifact", "search_sources"]) {
    if (delta[key]) console.log(`${key}: ${JSON.stringify(delta[key]).slice(0, 120)}`);
  }
  if (delta.artifact?.file_id) fileIds.push(delta.artifact.file_id);
  if (chunk.usage) {
    const u = chunk.usage;
    console.log(`usage: prompt=${u.prompt_tokens} completion=${u.completion_tokens} cost_cents=${u.cost_cents}`);
  }
}
console.log(`text: ${text}`);

for (const id of fileIds) {
  const resp = await fetch(`${process.env.SWITCHYARD_BASE_URL}/v3/files/${id}/content`, {
    headers: { Authorization: `Bearer ${process.env.SWITCHYARD_KEY}` },
  });
  const bytes = Buffer.from(await resp.arrayBuffer());
  console.log(`downloaded ${id}: ${bytes.length} bytes of ${resp.headers.get("content-type")}`);
}
