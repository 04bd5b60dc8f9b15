package bmc

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// Virtual media as vendors implement it (the simulator's Behaviours reproduce each; its doc cites
// the sources):
//   - a slot is a CD slot when its MediaTypes include CD or DVD (Supermicro's UsbCd lists CD with
//     USBStick); a CD slot that refuses the insert (held by another session) is passed over for
//     the next CD slot that takes media;
//   - InsertMedia carries TransferProtocolType (from the URL's scheme) and empty UserName and
//     Password where the slot's @Redfish.ActionInfo marks them required, else after a refusal
//     naming them (HTTP 400 ActionParameterMissing), as sushy does; a second try drops Inserted
//     and WriteProtected, which Supermicro X11/X12 refuse;
//   - a PATCH carries If-Match with the resource's ETag, and is sent once more with a fresh ETag
//     on 412 or 428 (HPE iLO, Lenovo XCC);
//   - the read-back after an insert or eject is polled for up to mediaSettle, because some BMCs
//     mount an image in the background and report Inserted only once they have opened it;
//   - media another party left in a slot is ejected only with a journal entry naming it (the
//     URL with any credentials redacted).

// mediaSettle bounds the read-back poll after an insert or eject. BMCs that mount in the
// background (iLO, XCC) report Inserted within seconds once their HTTP client has opened the
// image; 30 s covers a slow image server, and a slot that has not taken the image by then will
// not (the caller reports ErrMediaStuck rather than waiting for the confirm timeout).
const mediaSettle = 30 * time.Second

// requiredParams reads an ActionInfo and returns the parameters it marks Required; nil when it
// cannot be read (the refusal path still works).
func (c *Client) requiredParams(ctx context.Context, path string) []string {
	var ai struct {
		Parameters []struct {
			Name     string `json:"Name"`
			Required bool   `json:"Required"`
		} `json:"Parameters"`
	}
	if err := c.raw.get(ctx, path, &ai); err != nil {
		return nil
	}
	var out []string
	for _, p := range ai.Parameters {
		if p.Required {
			out = append(out, p.Name)
		}
	}
	return out
}

// insertBody is the InsertMedia body: Image (with Inserted/WriteProtected on the first try),
// plus the parameters the BMC requires.
func insertBody(image string, full bool, need []string) map[string]any {
	body := map[string]any{"Image": image}
	if full {
		body["Inserted"], body["WriteProtected"] = true, true
	}
	for _, p := range need {
		switch p {
		case "TransferProtocolType":
			body[p] = "HTTP"
			if strings.HasPrefix(strings.ToLower(image), "https://") {
				body[p] = "HTTPS"
			}
		case "UserName", "Password":
			body[p] = "" // the ISO server takes no credentials; AMI MegaRAC wants the fields anyway
		}
	}
	return body
}

// missingParams reads which of the parameters we know how to fill a refusal names.
func missingParams(err error) []string {
	var re *RedfishError
	if !errors.As(err, &re) || re.Status != http.StatusBadRequest {
		return nil
	}
	var out []string
	for _, p := range []string{"TransferProtocolType", "UserName", "Password"} {
		if strings.Contains(re.Message, p) {
			out = append(out, p)
		}
	}
	if slices.Contains(out, "UserName") || slices.Contains(out, "Password") {
		out = append(out, "UserName", "Password") // both travel together
	}
	return out
}

// patch sends a PATCH with If-Match set to the resource's current ETag (when it has one), and
// once more with a fresh one when the BMC answers 412 (stale) or 428 (missing).
func (c *Client) patch(ctx context.Context, path string, body any) error {
	send := func() error {
		var hdr http.Header
		var res struct {
			ETag string `json:"@odata.etag"`
		}
		h := http.Header{}
		if err := c.raw.do(ctx, http.MethodGet, path, nil, &res, &hdr); err == nil {
			if tag := hdr.Get("ETag"); tag != "" {
				h.Set("If-Match", tag)
			} else if res.ETag != "" {
				h.Set("If-Match", res.ETag)
			}
		}
		return c.raw.doWith(ctx, http.MethodPatch, path, h, body, nil, nil)
	}
	err := send()
	var re *RedfishError
	if errors.As(err, &re) && (re.Status == http.StatusPreconditionFailed || re.Status == http.StatusPreconditionRequired) {
		err = send()
	}
	return err
}

// settle polls slot path until ok holds for it or mediaSettle (at most the confirm timeout)
// passes; it returns the last read.
func (c *Client) settle(ctx context.Context, st *State, path string, ok func(Media) bool) (Media, error) {
	var got Media
	err := poll.Until(ctx, c.every(min(mediaSettle, c.cfg.confirmTimeout)), func(ctx context.Context) (bool, error) {
		m, err := c.readSlot(ctx, st, path)
		got = m
		return err == nil && ok(m), err
	})
	if errors.Is(err, poll.ErrTimeout) {
		return got, nil
	}
	return got, err
}

// cdSlots are the slots that take CD/DVD images and media, the one already holding url first,
// then empty ones, then the rest, each group in the BMC's order.
func cdSlots(media []Media, url string) []Media {
	var holding, empty, rest []Media
	for _, m := range media {
		switch {
		case !m.TakesCD() || !m.CanInsert():
		case m.Inserted && m.Image == url:
			holding = append(holding, m)
		case !m.Inserted:
			empty = append(empty, m)
		default:
			rest = append(rest, m)
		}
	}
	return slices.Concat(holding, empty, rest)
}

// redactURL names media without its credentials or query (tokens travel there).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		u.RawQuery = "REDACTED"
	}
	return u.String()
}
