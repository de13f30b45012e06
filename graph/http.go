package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// MaxRequestBytes bounds a request body: operations are small, and a client
// must not make the server hold an unbounded body in memory.
const MaxRequestBytes = 1 << 20

// transports are gqlgen's ways to send operations that /graphql accepts
// besides POST (served by post): GET, and OPTIONS for CORS preflights.
var transports = []graphql.Transport{transport.Options{}, transport.GET{}}

// Handler serves exec over HTTP. It does what gqlgen's handler.Server does,
// which cannot be given an executor of our own to share with REST.
func Handler(exec *Executor) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				writeGraphQLError(w, http.StatusInternalServerError, exec.PresentRecoveredError(r.Context(), p))
			}
		}()
		r = r.WithContext(graphql.StartOperationTrace(r.Context()))
		if r.ContentLength > MaxRequestBytes {
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, gqlerror.Errorf("the request body is over %d bytes", MaxRequestBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes) // bodies of unknown length too
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) && r.Header.Get("Upgrade") == "" {
			post(w, r, exec)
			return
		}
		for _, t := range transports {
			if t.Supports(r) {
				t.Do(w, r, exec)
				return
			}
		}
		writeGraphQLError(w, http.StatusBadRequest, gqlerror.Errorf("send operations with GET or POST (application/json)"))
	})
}

func isJSON(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// post serves an operation sent with POST, as gqlgen's POST transport does
// but for two things: an answer's data, JSON already, is written as it is
// rather than checked and compacted again by encoding/json (a tenth of the
// server's time on a nested tree), and a body that does not decode is not
// echoed back to its sender.
func post(w http.ResponseWriter, r *http.Request, exec *Executor) {
	start := graphql.Now()
	contentType := responseContentType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	var params graphql.RawParams
	if err := decodeParams(r.Body, &params); err != nil {
		status := http.StatusBadRequest
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(r.Context(), gqlerror.List{gqlerror.Errorf("the request body is not a JSON GraphQL request: %v", err)}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	opCtx, errs := exec.CreateOperationContext(r.Context(), &params)
	if errs != nil {
		w.WriteHeader(requestErrorStatus(contentType, errs))
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(r.Context(), opCtx), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(r.Context(), opCtx)
	writeResponse(w, responses(ctx))
}

func decodeParams(body io.Reader, params *graphql.RawParams) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // variables keep their numbers exact, as gqlgen's transports do
	return dec.Decode(params)
}

// responseContentType is the media type of the answer the client accepts,
// chosen as gqlgen's transports choose it.
func responseContentType(accept string) string {
	const (
		graphQLResponse = "application/graphql-response+json"
		plainJSON       = "application/json"
	)
	if accept == "" {
		return plainJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", plainJSON:
			return plainJSON
		case graphQLResponse:
			return graphQLResponse
		}
	}
	return graphQLResponse
}

// requestErrorStatus is the status of a request refused before it ran, as
// gqlgen's transports give it: parse, validation and limit errors are the
// client's (422, or 400 for application/graphql-response+json); others 200.
func requestErrorStatus(contentType string, errs gqlerror.List) int {
	if errcode.GetErrorKind(errs) != errcode.KindProtocol {
		return http.StatusOK
	}
	if contentType == "application/graphql-response+json" {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity
}

// writeResponse writes res as encoding/json would, writing the data of an
// answer without errors as it is.
func writeResponse(w io.Writer, res *graphql.Response) {
	if res != nil && len(res.Data) > 0 && len(res.Errors) == 0 && res.Extensions == nil &&
		res.Label == "" && res.Path == nil && res.HasNext == nil {
		_, _ = io.WriteString(w, `{"data":`)
		_, _ = w.Write(res.Data)
		_, _ = io.WriteString(w, "}")
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(&graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("internal error")}})
	}
	_, _ = w.Write(b)
}

func writeGraphQLError(w http.ResponseWriter, status int, err error) {
	gqlErr, ok := err.(*gqlerror.Error)
	if !ok {
		gqlErr = gqlerror.Errorf("internal error")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(&graphql.Response{Errors: gqlerror.List{gqlErr}})
}
