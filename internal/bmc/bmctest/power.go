package bmctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// reset handles ComputerSystem.Reset (caller holds b.mu).
func (b *BMC) reset(w http.ResponseWriter, r *http.Request) {
	var body struct{ ResetType string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	if b.opts.NoopReset {
		b.stats.PowerActions++
		w.WriteHeader(http.StatusNoContent)
		return
	}
	switch body.ResetType {
	case "On":
		if b.power != "Off" {
			writeError(w, http.StatusConflict, "IDRAC.2.8.RAC0508", "Unable to perform the operation because the server is already powered on.")
			return
		}
		b.power = "PoweringOn"
		b.startBoot()
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		if b.power == "Off" {
			writeError(w, http.StatusConflict, "IDRAC.2.8.RAC0509", "Unable to perform the operation because the server is powered off.")
			return
		}
		b.startBoot()
	case "ForceOff", "GracefulShutdown", "PushPowerButton":
		b.power = "Off"
	default:
		writeError(w, http.StatusBadRequest, "Base.1.12.ActionParameterNotSupported", "The parameter ResetType for the action Reset is not supported on the target resource.")
		return
	}
	b.stats.PowerActions++
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) startBoot() {
	b.lastReset = time.Now().UTC()
	b.pending++
	b.bootGen++ // the running system (a live ISO one included) goes away
	time.AfterFunc(b.opts.BootDelay, b.completeBoot)
}

// completeBoot is POST reaching the boot manager: it takes the one-time boot if armed and the
// virtual CD if its image can be read, then consumes the override.
func (b *BMC) completeBoot() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.advance()
	standard := (b.boot.Enabled == "Once" || b.boot.Enabled == "Continuous") && b.boot.Target == "Cd"
	if standard && b.oldBoot() && b.boot.viaStandard {
		standard = false // iDRAC9 < 4.40: the standard Cd override is ignored for the virtual CD
	}
	oem := b.attrs["ServerBoot.1.BootOnce"] == "Enabled" && b.attrs["ServerBoot.1.FirstBootDevice"] == "VCD-DVD"
	if b.opts.IgnoreBootOnce {
		standard, oem = false, false
	}
	img := ""
	for _, m := range b.media {
		if m.Inserted && hasType(m.Types, "CD") {
			img = m.Image
		}
	}
	b.mu.Unlock()

	from := "disk"
	if (standard || oem) && img != "" {
		// The UEFI loader reads the El Torito catalog and then the kernel: more range requests.
		if b.fetch(img, [][2]int64{{0, 2047}, {32768, 34815}, {34816, 65535}}) == nil {
			from = img
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.boot.Enabled == "Once" {
		b.boot.Enabled, b.boot.Target = "Disabled", "None"
	}
	b.boot.viaStandard = false
	b.attrs["ServerBoot.1.BootOnce"] = "Disabled"
	b.power = "On"
	b.stats.Boots++
	b.stats.BootedFrom = from
	b.pending--
	b.bootGen++
	if from != "disk" && b.opts.LiveReads > 0 {
		b.stats.LiveEnded = time.Time{}
		go b.live(b.bootGen, from)
	}
	b.wakeIdle()
}

// live is the live system booted from img reading it until the server restarts, is powered off
// or the media leaves the CD slot.
func (b *BMC) live(gen int, img string) {
	for {
		time.Sleep(b.opts.LiveReads)
		b.mu.Lock()
		inserted := false
		for _, m := range b.media {
			inserted = inserted || (m.Inserted && m.Image == img && hasType(m.Types, "CD"))
		}
		if b.closed || b.bootGen != gen || b.power != "On" || !inserted {
			// A newer boot from an ISO runs a live system of its own (and cleared LiveEnded);
			// any other end is this one's: media out, powered off, restarted from the disk.
			if !b.closed && (b.bootGen == gen || b.stats.BootedFrom == "disk") {
				b.stats.LiveEnded = time.Now()
			}
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		err := b.fetch(img, [][2]int64{{34816, 36863}})
		b.mu.Lock()
		if err == nil {
			b.stats.LiveReads++
			b.stats.LastLiveRead = time.Now()
		} else {
			b.stats.LiveReadErrors++
			b.stats.LastLiveReadError = time.Now()
		}
		b.mu.Unlock()
	}
}

// fetch reads byte ranges of an image as the iDRAC's remote file share does.
func (b *BMC) fetch(url string, ranges [][2]int64) error {
	for _, rg := range ranges {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", rg[0], rg[1]))
		resp, err := b.opts.Fetch.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.mu.Lock()
		b.stats.RangeRequests++
		b.mu.Unlock()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusPartialContent {
			return fmt.Errorf("GET %s range %d-%d: HTTP %d", url, rg[0], rg[1], resp.StatusCode)
		}
		if rg[0] == 32768 && !bytes.HasPrefix(data[1:], []byte("CD001")) {
			return fmt.Errorf("%s: no ISO 9660 volume descriptor", url)
		}
	}
	return nil
}

// insert handles VirtualMedia.InsertMedia (caller holds b.mu; released while fetching).
func (b *BMC) insert(w http.ResponseWriter, r *http.Request, slotPath string) {
	s := b.slot(slotPath)
	if s == nil {
		writeError(w, http.StatusNotFound, "Base.1.12.ResourceMissingAtURI", "The resource at the URI "+slotPath+" was not found.")
		return
	}
	var body struct {
		Image                string
		Inserted             *bool
		WriteProtected       *bool
		TransferProtocolType string
		UserName, Password   *string
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Image == "" {
		writeError(w, http.StatusBadRequest, "Base.1.12.ActionParameterMissing", "The action InsertMedia requires the parameter Image to be present in the request body.")
		return
	}
	if p := b.insertRefusal(body.TransferProtocolType, body.UserName, body.Password); p != "" {
		writeError(w, http.StatusBadRequest, "Base.1.12.ActionParameterMissing", "The action InsertMedia requires the parameter "+p+" to be present in the request body.")
		return
	}
	if s.taken {
		writeError(w, http.StatusInternalServerError, "IDRAC.2.8.VRM0021", "Virtual Media is detached or Virtual Media devices are already in use.")
		return
	}
	if len(body.Image) > 255 {
		writeError(w, http.StatusBadRequest, "Base.1.12.ActionParameterValueFormatError", "The value for the parameter Image in the action InsertMedia is of a different format than the parameter can accept.")
		return
	}
	if s.Inserted {
		writeError(w, http.StatusInternalServerError, "IDRAC.2.8.VRM0021", "Virtual Media is detached or Virtual Media devices are already in use.")
		return
	}
	b.mu.Unlock()
	err := b.fetch(body.Image, [][2]int64{{0, 2047}, {32768, 34815}})
	b.mu.Lock()
	if err != nil {
		writeError(w, http.StatusBadRequest, "IDRAC.2.8.RAC0904", "The remote file location is not accessible or reachable.")
		return
	}
	if s.Inserted {
		writeError(w, http.StatusInternalServerError, "IDRAC.2.8.VRM0021", "Virtual Media is detached or Virtual Media devices are already in use.")
		return
	}
	s.Inserted, s.Image = true, body.Image
	s.readyAt = time.Now().Add(b.opts.AsyncInsert)
	w.WriteHeader(http.StatusNoContent)
}

// eject handles VirtualMedia.EjectMedia (caller holds b.mu).
func (b *BMC) eject(w http.ResponseWriter, slotPath string) {
	s := b.slot(slotPath)
	if s == nil {
		writeError(w, http.StatusNotFound, "Base.1.12.ResourceMissingAtURI", "The resource at the URI "+slotPath+" was not found.")
		return
	}
	if !s.Inserted {
		writeError(w, http.StatusInternalServerError, "IDRAC.2.8.VRM0021", "Virtual Media is detached or Virtual Media devices are already in use.")
		return
	}
	s.Inserted, s.Image = false, ""
	w.WriteHeader(http.StatusNoContent)
}

var scpAttr = regexp.MustCompile(`<Attribute Name="([^"]+)">([^<]*)</Attribute>`)

// importSCP handles the Dell OEM ImportSystemConfiguration: a job applies iDRAC attributes.
func (b *BMC) importSCP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ImportBuffer    string
		ShareParameters struct{ Target string }
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ImportBuffer == "" {
		writeError(w, http.StatusBadRequest, "IDRAC.2.8.SYS405", "Unable to complete the operation because the import buffer is empty or malformed.")
		return
	}
	attrs := map[string]string{}
	for _, m := range scpAttr.FindAllStringSubmatch(body.ImportBuffer, -1) {
		attrs[strings.ReplaceAll(m[1], "#", ".")] = m[2]
	}
	b.nextID++
	id := fmt.Sprintf("JID_%012d", b.nextID)
	p := b.mgr + "/Jobs/" + id
	b.jobs[p] = &job{doneAt: time.Now().Add(b.opts.JobDelay), attrs: attrs, state: "Running"}
	w.Header().Set("Location", p)
	w.WriteHeader(http.StatusAccepted)
}

// advance completes jobs whose time has come (caller holds b.mu).
func (b *BMC) advance() {
	now := time.Now()
	for _, j := range b.jobs {
		if (j.state == "Running" || j.state == "Scheduled") && !now.Before(j.doneAt) {
			for k, v := range j.attrs {
				b.attrs[k] = v
			}
			j.state = "Completed"
		}
	}
}
