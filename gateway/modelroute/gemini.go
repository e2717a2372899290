package modelroute

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// geminiTools are the only members a Gemini request's tool may carry:
// function declarations, the agent's own tools, which the provider only
// names back. Every other tool (googleSearch, googleSearchRetrieval,
// urlContext, fileSearch, googleMaps, codeExecution, computerUse,
// retrieval, and any the API adds) is a provider-side tool and is
// refused: some make the provider fetch a destination the request names
// (urlContext), the others run where the route sees nothing. The API
// reads both the camelCase and the snake_case spelling of a member.
var geminiTools = []string{"functionDeclarations", "function_declarations"}

// geminiFilePart is what the route reads of a part: whether it carries
// file data (a URI the provider fetches), in either spelling.
type geminiFilePart struct {
	FileData      json.RawMessage `json:"fileData"`
	FileDataSnake json.RawMessage `json:"file_data"`
}

func (p geminiFilePart) namesFile() bool { return present(p.FileData) || present(p.FileDataSnake) }

// geminiFunctionResponse is what the route reads of a part's function
// response: its own parts (a multimodal function response), which may
// carry file data too.
type geminiFunctionResponse struct {
	Parts []geminiFilePart `json:"parts"`
}

// geminiContent is what the route reads of a Gemini Content (a turn, or
// the system instruction): whether a part, or a part of a part's
// function response (either spelling), names a file by URI, which the
// provider then fetches.
type geminiContent struct {
	Parts []struct {
		geminiFilePart
		FunctionResponse      *geminiFunctionResponse `json:"functionResponse"`
		FunctionResponseSnake *geminiFunctionResponse `json:"function_response"`
	} `json:"parts"`
}

// namesFile reports whether a part of c, or a part of one of its
// function responses, carries file data (a URI the provider fetches).
func (c *geminiContent) namesFile() bool {
	if c == nil {
		return false
	}
	for _, p := range c.Parts {
		if p.namesFile() {
			return true
		}
		for _, fr := range []*geminiFunctionResponse{p.FunctionResponse, p.FunctionResponseSnake} {
			if fr != nil && slices.ContainsFunc(fr.Parts, geminiFilePart.namesFile) {
				return true
			}
		}
	}
	return false
}

// present reports whether a member was given a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// geminiConfig is what the route reads of a generationConfig: the
// output cap and the number of candidates asked for.
type geminiConfig struct {
	MaxOutputTokens      *int64 `json:"maxOutputTokens"`
	MaxOutputTokensSnake *int64 `json:"max_output_tokens"`
	CandidateCount       *int64 `json:"candidateCount"`
	CandidateCountSnake  *int64 `json:"candidate_count"`
}

// MaxGeminiCandidates bounds a Gemini request's
// generationConfig.candidateCount (either spelling; 0 is the API's
// default, one): a request for more is refused
// ([CodeModelRequestInvalid]). Each candidate may run to the output cap,
// so a stream cut before its usage would be charged one cap for
// several, and the first candidate's finishReason would end the count
// while the others still generate.
const MaxGeminiCandidates = 1

// candidatesOK reports whether c asks for at most MaxGeminiCandidates
// candidates, and none negative, in both spellings.
func (c *geminiConfig) candidatesOK() bool {
	if c == nil {
		return true
	}
	for _, n := range []*int64{c.CandidateCount, c.CandidateCountSnake} {
		if n != nil && (*n < 0 || *n > MaxGeminiCandidates) {
			return false
		}
	}
	return true
}

// parseGemini is ParseRequest for Gemini. The model and the method are
// read from the path alone (geminiPath); the query is geminiSSEQuery on
// a stream and empty otherwise. The body is a strict JSON object; a
// "model" member, if present, names the path's model (as the model or
// as "models/{model}"); generationConfig asks for at most
// MaxGeminiCandidates candidates. A tool other than function
// declarations, a part with file data (in the contents or the system
// instruction, or in a part's function response) and a
// cachedContent reference are refused ([CodeModelToolRefused]): each
// has the provider fetch or read something the request names beyond
// its own text. The output cap is generationConfig.maxOutputTokens (the
// larger of its two spellings).
func parseGemini(method, path, rawQuery string, body []byte) (Request, error) {
	model, gm, ok := geminiPath(path)
	wantQuery := ""
	if gm == GeminiStream {
		wantQuery = geminiSSEQuery
	}
	if !ok || method != http.MethodPost || rawQuery != wantQuery {
		return Request{}, checkfu.Refuse(CodeModelPathRefused, "modelroute: %s %s is not the %s route", checkfu.Quote(method), checkfu.Quote(path), Gemini)
	}
	var fields struct {
		Model                  *string                      `json:"model"`
		Contents               []geminiContent              `json:"contents"`
		SystemInstruction      *geminiContent               `json:"systemInstruction"`
		SystemInstructionSnake *geminiContent               `json:"system_instruction"`
		Tools                  []map[string]json.RawMessage `json:"tools"`
		GenerationConfig       *geminiConfig                `json:"generationConfig"`
		GenerationConfigSnake  *geminiConfig                `json:"generation_config"`
		CachedContent          json.RawMessage              `json:"cachedContent"`
		CachedContentSnake     json.RawMessage              `json:"cached_content"`
	}
	if err := strictjson.Unmarshal(body, &fields, strictjson.Options{MaxBytes: MaxRequestBytes, AllowUnknownMembers: true}); err != nil {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request body is not a strict JSON object: %v", err)
	}
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request body is not a JSON object")
	}
	if fields.Model != nil && *fields.Model != model && *fields.Model != "models/"+model {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request body names another model than its path")
	}
	for _, tool := range fields.Tools {
		for name := range tool {
			if !slices.Contains(geminiTools, name) {
				return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request asks for the provider-side tool %s", checkfu.Quote(name))
			}
		}
	}
	files := fields.SystemInstruction.namesFile() || fields.SystemInstructionSnake.namesFile()
	for i := range fields.Contents {
		files = files || fields.Contents[i].namesFile()
	}
	if files {
		return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request names file data for the provider to fetch")
	}
	if present(fields.CachedContent) || present(fields.CachedContentSnake) {
		return Request{}, checkfu.Refuse(CodeModelToolRefused, "modelroute: the request names cached content for the provider to read")
	}
	if !fields.GenerationConfig.candidatesOK() || !fields.GenerationConfigSnake.candidatesOK() {
		return Request{}, checkfu.Refuse(CodeModelRequestInvalid, "modelroute: the request asks for more than %d candidate", MaxGeminiCandidates)
	}
	r := Request{Dialect: Gemini, Model: model, Method: gm, Stream: gm == GeminiStream, Bytes: int64(len(body))}
	for _, c := range []*geminiConfig{fields.GenerationConfig, fields.GenerationConfigSnake} {
		for _, v := range []*int64{c.maxOutput(), c.maxOutputSnake()} {
			if v != nil && *v > r.MaxOutput {
				r.MaxOutput = *v // the larger, where the provider might read either
			}
		}
	}
	return r, nil
}

func (c *geminiConfig) maxOutput() *int64 {
	if c == nil {
		return nil
	}
	return c.MaxOutputTokens
}

func (c *geminiConfig) maxOutputSnake() *int64 {
	if c == nil {
		return nil
	}
	return c.MaxOutputTokensSnake
}
