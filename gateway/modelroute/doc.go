// Package modelroute holds the pure parts of the model route: the plane's
// side of an agent's own model calls, which reach the model provider
// through the one door with the model key attached at the outbound edge
// only. It reads what an agent sends and what a provider streams back,
// and decides nothing it would need a key or the network for:
//
//   - a Dialect is one model API (Anthropic Messages, OpenAI Responses,
//     OpenAI Chat Completions, Gemini): its path and method, the headers
//     an agent's request may keep, and where the provider reports usage.
//     Anthropic Messages alone serves one more path, its token count
//     (POST /v1/messages/count_tokens, which Claude Code sends once a
//     turn). Gemini names the model in the path, POST
//     /v1beta/models/{model}:generateContent and
//     :streamGenerateContent?alt=sse: the model is read from the path
//     alone, a bounded name of [A-Za-z0-9._-] (no '/', '%', ':', "..");
//     its request may declare functions and nothing the provider runs or
//     fetches itself (search, URL context, code execution, file data,
//     cached content: [CodeModelToolRefused]), and at most
//     MaxGeminiCandidates candidates ([CodeModelRequestInvalid]);
//   - ParseRequest reads an agent's request (path, method, strict JSON
//     body) into the model it asks for, whether it streams and whether
//     it is a token count, refusing any other path, sub-path or method
//     ([CodeModelPathRefused]) and a body that is not a strict JSON
//     object naming a model ([CodeModelRequestInvalid]); a token count's
//     body is read as a Messages body;
//   - Request.Upstream is where a request goes: the registration's
//     resource, or for a token count the resource followed by
//     "/count_tokens", or for Gemini the resource followed by the
//     checked model and method (and "?alt=sse" for a stream); never a
//     path the agent chose;
//   - Policy checks the model against the session's allowed models
//     ([CodeModelNotAllowed]) and a Meter the session's budget in
//     requests and tokens ([CodeModelBudgetExhausted]), both before the
//     upstream sees anything. A token count spends one request and
//     holds and is charged no tokens: the provider generates nothing,
//     and the input_tokens it answers are a count, not a use;
//   - Request.Headers sends the route's own content type and accept
//     (Request.Accept: server-sent events for a stream, JSON otherwise)
//     and keeps only the headers the dialect lists (API version and
//     beta flags): every credential- or
//     routing-bearing header the agent sends (Authorization, x-api-key,
//     cookies, Host, forwarding and proxy headers, organisation and
//     project selectors) is dropped, so the agent's placeholder key never
//     travels;
//   - Relay copies a server-sent-event stream as it arrives, whole
//     events only, each bounded (MaxEventBytes), the whole stream too
//     (MaxStreamBytes, [CodeModelStreamTooLarge]); the events one read
//     completed (MaxBatchBytes) pass a screen (the edge's echo check)
//     together before a byte of them is written, and it reads the
//     provider's usage from them (Usage). One batch is screened and
//     written on a goroutine of its own while the next is read; no
//     batch is handed on after one failed, and Relay returns only once
//     nothing more will be written.
//
// Invariants: nothing here holds or reads a key; the request's content
// (prompt, completion) is never kept, only the model, the token counts
// and the status; no byte of the agent's path reaches the upstream URL
// (Upstream appends a constant, and only to a request whose path equals
// the dialect's count path exactly, or for Gemini a model name it
// checked itself and a constant method); every refusal is a
// *checkfu.Refusal with a code of codes.go.
package modelroute
