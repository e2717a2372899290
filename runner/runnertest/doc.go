// Package runnertest holds a scripted ACP agent for the Runner's tests,
// its examples and examples/quickstart. It is a real process when run
// with Main (a program re-executing itself with AgentEnv set): it speaks
// ACP v1 over its stdin and stdout with package acp's bounded framing,
// and calls its tools through the session's broker socket with the
// official MCP Go SDK client, exactly as third-party sandbox code would.
//
// Nothing here is a real model: it plays a fixed Script, and says so in
// its agentInfo ("checkfu-scripted-agent") and in every message it sends.
// Evidence gathered with it is checkfu.LabelMock.
//
// Model is a scripted model server, a mock too: it speaks enough of
// Anthropic Messages and OpenAI Responses for a real third-party agent's
// turn (a tool call, then text once the tool's result is back) and
// records what it received.
//
// Invariants:
//
//   - Every line the agent reports starts with "[scripted]", one per step
//     of its Script, and the turn ends with end_turn.
//   - Text it did not write is quoted: a Get step says an upstream's
//     refusal header as it is only when it looks like a refusal code
//     (lower-case letters, digits and '_', at most 64 bytes), and quotes
//     anything else, and any error, with checkfu.Quote.
//   - A Script of Get steps alone never connects to the broker.
package runnertest
