package agentiso

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxURLLength is the longest virtual-media URL iDRAC9 accepts (it refuses a longer Image with
// ActionParameterValueFormatError), so a URL the server hands out is one the BMC takes. The boot
// stage's limit is bmc.MaxMediaURL; a test keeps the two equal without this package importing bmc.
const MaxURLLength = 255

// Fetch is one request served, for the log: who fetched what, which range, how many bytes.
type Fetch struct {
	Time     time.Time     `json:"time"`
	Remote   string        `json:"remote"`
	Method   string        `json:"method"`
	Path     string        `json:"path"`
	Node     string        `json:"node,omitempty"`
	Range    string        `json:"range,omitempty"`
	Status   int           `json:"status"`
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration"`
}

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	Images []Image
	// OnFetch is called once per request after it is served; it must be safe for concurrent use.
	OnFetch func(Fetch)
	// Route, when set, maps a request path that is not an image's own (a node's tokenized URL)
	// to the image path it serves and the node it names; the fetch then names that node.
	Route func(path string) (image, node string, ok bool)
}

// NewHandler serves the images with HEAD and GET, single and multiple byte ranges (206), strong
// ETags with If-None-Match/If-Range, and Content-Length. Any number of readers may fetch at once;
// every read is a positioned read (ReadAt), so readers never contend for a file offset.
func NewHandler(opts HandlerOptions) (http.Handler, error) {
	byPath := map[string]Image{}
	for _, img := range opts.Images {
		if _, dup := byPath[img.Path]; dup {
			return nil, fmt.Errorf("two images served at %s", img.Path)
		}
		byPath[img.Path] = img
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		img, ok := byPath[r.URL.Path]
		node := img.Node
		if !ok && opts.Route != nil {
			if p, n, routed := opts.Route(r.URL.Path); routed {
				img, ok = byPath[p]
				node = n
			}
		}
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(cw, "method not allowed", http.StatusMethodNotAllowed)
		case !ok:
			http.NotFound(cw, r)
		default:
			h := w.Header()
			h.Set("Content-Type", "application/x-iso9660-image")
			h.Set("ETag", img.ETag)
			h.Set("Cache-Control", "no-cache")
			http.ServeContent(cw, r, "", img.ModTime, io.NewSectionReader(img.Content, 0, img.Size))
		}
		if opts.OnFetch != nil {
			opts.OnFetch(Fetch{Time: start, Remote: r.RemoteAddr, Method: r.Method, Path: r.URL.Path, Node: node,
				Range: r.Header.Get("Range"), Status: cw.status, Bytes: cw.n, Duration: time.Since(start)})
		}
	}), nil
}

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadFrom keeps the server's zero-copy path (sendfile for the shared ISO) while counting.
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.ResponseWriter.(io.Writer), r)
	c.n += n
	return n, err
}

// URL joins the base URL the BMCs use and an image's path, refusing URLs iDRAC would reject.
func URL(baseURL string, img Image) (string, error) {
	if baseURL == "" {
		return "", errors.New("no ISO base URL: iso.serveAddress listens on all interfaces, so set iso.baseURL " +
			"to the http(s)://address:port the BMCs reach")
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("iso.baseURL %q: want http(s)://host[:port][/prefix]", baseURL)
	}
	s := strings.TrimRight(baseURL, "/") + img.Path
	if len(s) > MaxURLLength {
		return "", fmt.Errorf("ISO URL %s is %d characters; iDRAC accepts at most %d: shorten iso.baseURL or the node name", s, len(s), MaxURLLength)
	}
	return s, nil
}

// ServeOptions configure Serve.
type ServeOptions struct {
	Addr    string
	Handler http.Handler
	// TLSCert and TLSKey enable HTTPS when both are set.
	TLSCert, TLSKey string
	// Ready is called with the bound address once the listener is open.
	Ready func(net.Addr)
}

// Serve listens and serves until ctx is done, then shuts down gracefully (in-flight downloads get
// ten seconds to finish).
func Serve(ctx context.Context, opts ServeOptions) error {
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("ISO server: %w", err)
	}
	srv := &http.Server{Handler: opts.Handler, ReadHeaderTimeout: 10 * time.Second}
	if opts.TLSCert != "" || opts.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("ISO server: iso.tlsCert/iso.tlsKey: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("ISO server: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("ISO server shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("ISO server: %w", err)
	}
	return nil
}
