// Asks the /v3 assistant for a chart with openai-node, prints what the
// SDK's types leave out (activity, artifacts, search sources, the cost of
// the call) and downloads the chart by its file_id. docs/clients.md shows
// it; the e2e tests run it against the real binary.
//
//   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... node recipe.mjs
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: `${process.env.SWITCHYARD_BASE_URL}/v3`, // "/v1" for the pass-through
  apiKey: process.env.SWITCHYARD_KEY,
  defaultHeaders: { "X-Include-Cost": "1" }, // usage.cost_cents
});

try {
  const stream = await client.chat.completions.create({
    model: "switchyard-demo",
    messages: [{ role: "user", content: "Draw a chart of quarterly revenue" }],
    stream: true,
  });
  let text = "";
  const fileIds = [];
  for await (const chunk of stream) {
    // Chunks are plain objects: the /v3 keys are there, untyped.
    const delta = chunk.choices[0]?.delta ?? {};
    text += delta.content ?? "";
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
    const resp = await client.files.content(id);
    const bytes = Buffer.from(await resp.arrayBuffer());
    console.log(`downloaded ${id}: ${bytes.length} bytes of ${resp.headers.get("content-type")}`);
  }
} catch (err) {
  if (err instanceof OpenAI.APIError) {
    // The gateway's error envelope: status, error.code, error.message.
    console.error(`${err.status} ${err.code}: ${err.message}`);
    process.exit(1);
  }
  throw err;
}
