// A minimal ACP agent on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0, pinned in npm/package.json), for acp's integration tests. One prompt
// turn: a message chunk, a tool call, a permission request, the tool call's
// outcome, a closing chunk, end_turn. The SDK does the framing and the
// JSON-RPC: it rejects session/new sent before the initialize reply.
// .ci/setup.d/30-acp-agent.sh copies it beside the installed node_modules.
import { agent, methods, ndJsonStream } from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

let sessions = 0;
const app = agent({ name: "checkfu-sdk-agent" })
  .onRequest(methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: { loadSession: false } }))
  .onRequest(methods.agent.session.new, () => ({ sessionId: `sdk-${++sessions}` }))
  .onNotification(methods.agent.session.cancel, () => {})
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const sessionId = params.sessionId;
    const update = (u) => client.notify(methods.client.session.update, { sessionId, update: u });
    const toolCall = { toolCallId: "call_1", title: "Edit config", kind: "edit", status: "pending" };
    await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Editing the config." } });
    await update({ sessionUpdate: "tool_call", ...toolCall });
    const answer = await client.request(methods.client.session.requestPermission, {
      sessionId,
      toolCall,
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    if (answer.outcome.outcome === "cancelled") return { stopReason: "cancelled" };
    const allowed = answer.outcome.optionId === "allow";
    await update({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: allowed ? "completed" : "failed" });
    await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: allowed ? "Done." : "Skipped." } });
    return { stopReason: "end_turn" };
  });

app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
