// Calls the gateway with the Vercel AI SDK's default OpenAI provider,
// openai("switchyard-demo"), which speaks the Responses API: a text
// answer, a stream, usage and the cost of each call, and an error. On /v3
// it asks for a chart, reads the /v3 events (activity, artifacts) from the
// raw chunks and downloads the chart by its file_id. docs/clients.md shows
// it; the e2e tests run it against the real binary on both bases.
//
//   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... node responses.mjs /v3
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, streamText } from "ai";

const api = process.argv[2] ?? "/v3"; // "/v1": the backend's Responses API, passed through
const openai = createOpenAI({
  baseURL: `${process.env.SWITCHYARD_BASE_URL}${api}`,
  apiKey: process.env.SWITCHYARD_KEY,
  headers: { "X-Include-Cost": "1" }, // usage.cost_cents
});

// A JSON answer: the SDK's usage has the tokens; the cost is in the body.
const answer = await generateText({ model: openai("switchyard-demo"), prompt: "Say hello" });
console.log(`text: ${answer.text}`);
console.log(`usage: input=${answer.usage.inputTokens} output=${answer.usage.outputTokens}` +
  ` cost_cents=${answer.response.body.usage.cost_cents}`);

// A stream: includeRawChunks hands over every Responses event as it came,
// with the /v3 ones (type "response.switchyard.<key>") the SDK skips.
const result = streamText({
  model: openai("switchyard-demo"),
  prompt: api === "/v3" ? "Draw a chart of quarterly revenue" : "Say hello",
  includeRawChunks: true,
});
let text = "";
let costCents;
const fileIds = [];
for await (const part of result.fullStream) {
  if (part.type === "text-delta") text += part.text;
  if (part.type === "error") throw part.error; // streamText reports errors here, not by throwing
  if (part.type !== "raw") continue;
  const event = part.rawValue;
  if (event.type?.startsWith("response.switchyard.")) {
    const key = event.type.slice("response.switchyard.".length);
    console.log(`${key}: ${JSON.stringify(event[key]).slice(0, 120)}`);
    if (event.artifact?.file_id) fileIds.push(event.artifact.file_id);
  }
  if (event.type === "response.completed") costCents = event.response.usage.cost_cents;
}
const usage = await result.usage;
console.log(`stream: ${text}`);
console.log(`stream usage: input=${usage.inputTokens} output=${usage.outputTokens} cost_cents=${costCents}`);

// The SDK has no Files API: download with fetch.
for (const id of fileIds) {
  const resp = await fetch(`${process.env.SWITCHYARD_BASE_URL}/v3/files/${id}/content`, {
    headers: { Authorization: `Bearer ${process.env.SWITCHYARD_KEY}` },
  });
  const bytes = Buffer.from(await resp.arrayBuffer());
  console.log(`downloaded ${id}: ${bytes.length} bytes of ${resp.headers.get("content-type")}`);
}

// Errors are APICallError: the HTTP status, and the gateway's envelope
// {"error":{"message","type","code"}} parsed in data.
try {
  const wrongKey = createOpenAI({ baseURL: `${process.env.SWITCHYARD_BASE_URL}${api}`, apiKey: "sk-wrong" });
  await generateText({ model: wrongKey("switchyard-demo"), prompt: "Say hello" });
} catch (err) {
  if (!APICallError.isInstance(err)) throw err;
  console.log(`error: ${err.statusCode} ${err.data?.error?.code}: ${err.message}`);
}
