// Asks the /v3 assistant for a chart with LangChain JS (ChatOpenAI over
// Chat Completions), in one answer and in a stream. __includeRawResponse
// keeps each raw answer and chunk in additional_kwargs.__raw_response,
// where the /v3 keys are (activity, artifacts, the cost of the call).
// docs/clients.md shows it; the e2e tests run it against the real binary.
//
//   SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... node recipe.mjs
import { ChatOpenAI } from "@langchain/openai";

const model = new ChatOpenAI({
  model: "switchyard-demo",
  apiKey: process.env.SWITCHYARD_KEY,
  configuration: {
    baseURL: `${process.env.SWITCHYARD_BASE_URL}/v3`,
    defaultHeaders: { "X-Include-Cost": "1" }, // usage.cost_cents
  },
  __includeRawResponse: true,
});

// One answer: the raw completion holds artifacts[] and usage.cost_cents.
const message = await model.invoke("Draw a chart of quarterly revenue");
const raw = message.additional_kwargs.__raw_response;
console.log(`text: ${message.content}`);
for (const artifact of raw.artifacts) {
  console.log(`artifact: ${JSON.stringify(artifact).slice(0, 120)}`);
}
const u = message.usage_metadata;
console.log(`usage: input=${u.input_tokens} output=${u.output_tokens} cost_cents=${raw.usage.cost_cents}`);

// A stream: every chunk carries its raw chat chunk, and the delta's /v3 keys.
let text = "";
const fileIds = [];
for await (const chunk of await model.stream("Draw a chart of quarterly revenue")) {
  text += chunk.content;
  const delta = chunk.additional_kwargs.__raw_response?.choices[0]?.delta ?? {};
  for (const key of ["act", "artifact", "search_sources"]) {
    if (delta[key]) console.log(`stream ${key}: ${JSON.stringify(delta[key]).slice(0, 120)}`);
  }
  if (delta.artifact?.file_id) fileIds.push(delta.artifact.file_id);
  if (chunk.usage_metadata) {
    // The last chunk: the usage LangChain read, with the gateway's cost kept.
    const { input_tokens, output_tokens } = chunk.usage_metadata;
    const cost = chunk.response_metadata.usage?.cost_cents;
    console.log(`stream usage: input=${input_tokens} output=${output_tokens} cost_cents=${cost}`);
  }
}
console.log(`stream text: ${text}`);

// LangChain has no Files API: download with fetch.
for (const id of fileIds) {
  const resp = await fetch(`${process.env.SWITCHYARD_BASE_URL}/v3/files/${id}/content`, {
    headers: { Authorization: `Bearer ${process.env.SWITCHYARD_KEY}` },
  });
  const bytes = Buffer.from(await resp.arrayBuffer());
  console.log(`downloaded ${id}: ${bytes.length} bytes of ${resp.headers.get("content-type")}`);
}

// Errors are openai-node's, which LangChain passes on: the HTTP status and
// the gateway's error code. A 401 is not retried.
try {
  const wrongKey = new ChatOpenAI({
    model: "switchyard-demo",
    apiKey: "sk-wrong",
    configuration: { baseURL: `${process.env.SWITCHYARD_BASE_URL}/v3` },
  });
  await wrongKey.invoke("Say hello");
} catch (err) {
  console.log(`error: ${err.status} ${err.code}: ${err.message}`);
}
