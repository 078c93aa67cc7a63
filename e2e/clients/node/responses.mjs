// Asks the /v3 assistant for a chart through openai-node's Responses
// client. The /v3 extras arrive as events of their own types,
// "response.switchyard.<key>", which the SDK's stream hands over as plain
// objects. docs/clients.md shows it; the e2e tests run it against the
// real binary.
//
//   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... node responses.mjs
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: `${process.env.SWITCHYARD_BASE_URL}/v3`,
  apiKey: process.env.SWITCHYARD_KEY,
  defaultHeaders: { "X-Include-Cost": "1" }, // usage.cost_cents
});

// A JSON answer: output_text, and artifacts[] beside output.
const answer = await client.responses.create({ model: "switchyard-demo", input: "Draw a chart of quarterly revenue" });
console.log(`text: ${answer.output_text}`);
for (const artifact of answer.artifacts) console.log(`artifact: ${JSON.stringify(artifact).slice(0, 120)}`);
console.log(`usage: input=${answer.usage.input_tokens} output=${answer.usage.output_tokens} cost_cents=${answer.usage.cost_cents}`);

// A stream: the /v3 events come between the Responses API's own.
const stream = await client.responses.create({
  model: "switchyard-demo",
  input: "Draw a chart of quarterly revenue",
  stream: true,
});
let text = "";
const fileIds = [];
for await (const event of stream) {
  if (event.type === "response.output_text.delta") text += event.delta;
  if (event.type.startsWith("response.switchyard.")) {
    const key = event.type.slice("response.switchyard.".length);
    console.log(`stream ${key}: ${JSON.stringify(event[key]).slice(0, 120)}`);
    if (event.artifact?.file_id) fileIds.push(event.artifact.file_id);
  }
  if (event.type === "response.completed") {
    const { usage } = event.response;
    console.log(`stream usage: input=${usage.input_tokens} output=${usage.output_tokens} cost_cents=${usage.cost_cents}`);
  }
}
console.log(`stream text: ${text}`);

for (const id of fileIds) {
  const resp = await client.files.content(id);
  const bytes = Buffer.from(await resp.arrayBuffer());
  console.log(`downloaded ${id}: ${bytes.length} bytes of ${resp.headers.get("content-type")}`);
}
