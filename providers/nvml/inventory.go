//go:build linux && cgo

package nvml

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// placement is an instance's placement in engine/mig's terms.
func placement(in agentv1.Instance) mig.Placement {
	return mig.Placement{Start: in.Start, Size: in.Size}
}

// device is one GPU as read, with the NVML handles Apply needs.
type device struct {
	dev          nvml.Device
	gpu          *mig.GPU // catalog model; nil when unknown
	info         agentv1.GPU
	migSupported bool
	current      int
	pending      int
	gis          []*liveGI
	migErr       error  // why the MIG instances could not be listed
	procErr      string // why the processes could not be listed
}

// liveGI is a GPU instance with its handles.
type liveGI struct {
	gi   nvml.GpuInstance
	prof giProfile
	inst agentv1.Instance
	out  agentv1.GPUInstance
	cis  []liveCI
}

// liveCI is a compute instance with its handle.
type liveCI struct {
	ci   nvml.ComputeInstance
	full bool // uses every compute slice of its GPU instance
}

func read(lib nvml.Interface, cat *mig.Catalog) (*agentv1.Inventory, error) {
	inv := &agentv1.Inventory{Version: agentv1.InventoryVersion, GPUs: []agentv1.GPU{}}
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		inv.DriverVersion = v
	} else {
		inv.Warnings = append(inv.Warnings, "driver version: "+retName(ret))
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		inv.CUDAVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	devs, warns, err := readDevices(lib, cat)
	if err != nil {
		return nil, err
	}
	inv.Warnings = append(inv.Warnings, warns...)
	for _, d := range devs {
		inv.GPUs = append(inv.GPUs, d.info)
	}
	return inv, nil
}

func readDevices(lib nvml.Interface, cat *mig.Catalog) ([]*device, []string, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("counting GPUs: %s", retName(ret))
	}
	var devs []*device
	var warns []string
	for i := 0; i < n; i++ {
		d, w, err := readDevice(lib, i, cat)
		if err != nil {
			return nil, nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		devs = append(devs, d)
		warns = append(warns, w...)
	}
	return devs, warns, nil
}

func readDevice(lib nvml.Interface, index int, cat *mig.Catalog) (*device, []string, error) {
	dev, ret := lib.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("getting the device handle: %s", retName(ret))
	}
	d := &device{dev: dev, info: agentv1.GPU{Index: index}}
	if d.info.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("reading the UUID: %s", retName(ret))
	}
	if d.info.Name, ret = dev.GetName(); ret != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("reading the name: %s", retName(ret))
	}
	if g, ok := lookupModel(dev, d.info.Name, cat); ok {
		d.gpu, d.info.Model = g, g.Key
	}
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return nil, nil, fmt.Errorf("reading the memory size: %s", retName(ret))
	}
	d.info.MemoryMiB = int(mem.Total >> 20)
	var warns []string
	if err := d.readMIG(); err != nil {
		if noPermission(err) {
			d.migErr = err
			warns = append(warns, fmt.Sprintf("GPU %d: MIG instances not listed: %v (needs root)", index, err))
		} else {
			return nil, nil, err
		}
	}
	d.info.Processes, d.procErr = processes(dev)
	if d.procErr != "" {
		warns = append(warns, fmt.Sprintf("GPU %d: running processes not listed: %s", index, d.procErr))
	}
	return d, warns, nil
}

// readMIG reads the MIG mode and, when MIG is on, the instances.
func (d *device) readMIG() error {
	cur, pend, ret := d.dev.GetMigMode()
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_SUPPORTED:
		d.migSupported, d.info.MIGCapable, d.info.MIGEnabled, d.info.MIGPending = false, false, false, false
		d.gis, d.info.Instances = nil, nil
		return nil
	default:
		return fmt.Errorf("reading the MIG mode: %s", retName(ret))
	}
	d.migSupported, d.current, d.pending = true, cur, pend
	d.info.MIGCapable = true
	d.info.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE
	d.info.MIGPending = cur != pend
	d.gis, d.info.Instances = nil, nil
	if cur != nvml.DEVICE_MIG_ENABLE {
		return nil
	}
	profs, err := deviceProfiles(d.dev, d.gpu)
	if err != nil {
		return err
	}
	for _, p := range profs {
		info := p.info
		gis, ret := d.dev.GetGpuInstances(&info)
		if ret != nvml.SUCCESS {
			return &callError{"listing GPU instances of profile " + p.name, ret}
		}
		for _, gi := range gis {
			l, err := readGI(gi, p)
			if err != nil {
				return err
			}
			d.gis = append(d.gis, l)
		}
	}
	sort.SliceStable(d.gis, func(i, j int) bool {
		a, b := d.gis[i].inst, d.gis[j].inst
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.Size > b.Size
	})
	for _, l := range d.gis {
		d.info.Instances = append(d.info.Instances, l.out)
	}
	return nil
}

func readGI(gi nvml.GpuInstance, p giProfile) (*liveGI, error) {
	info, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return nil, &callError{"reading a GPU instance", ret}
	}
	l := &liveGI{gi: gi, prof: p, inst: agentv1.Instance{Profile: p.name, Start: int(info.Placement.Start), Size: int(info.Placement.Size)}}
	out := agentv1.GPUInstance{ID: int(info.Id), Instance: l.inst}
	for cid := 0; cid < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; cid++ {
		cp, ret := gi.GetComputeInstanceProfileInfo(cid, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != nvml.SUCCESS {
			continue
		}
		cis, ret := gi.GetComputeInstances(&cp)
		if ret != nvml.SUCCESS {
			return nil, &callError{fmt.Sprintf("listing the compute instances of GPU instance %d", info.Id), ret}
		}
		for _, ci := range cis {
			ciInfo, ret := ci.GetInfo()
			if ret != nvml.SUCCESS {
				return nil, &callError{"reading a compute instance", ret}
			}
			full := cp.SliceCount == p.info.SliceCount
			name := p.name
			if !full {
				name = fmt.Sprintf("%dc.%s", cp.SliceCount, p.name)
			}
			l.cis = append(l.cis, liveCI{ci: ci, full: full})
			out.ComputeInstances = append(out.ComputeInstances, agentv1.ComputeInstance{
				ID: int(ciInfo.Id), Profile: name, Start: int(ciInfo.Placement.Start), Size: int(ciInfo.Placement.Size),
			})
		}
	}
	sort.Slice(out.ComputeInstances, func(i, j int) bool { return out.ComputeInstances[i].ID < out.ComputeInstances[j].ID })
	l.out = out
	return l, nil
}

// processes lists the compute and graphics processes on dev, and says why
// they could not be listed, if they could not. A simulated server that does
// not implement the calls panics; that, like ERROR_NOT_SUPPORTED, means no
// process is reported.
func processes(dev nvml.Device) ([]agentv1.Process, string) {
	byPID := map[int]agentv1.Process{}
	var warn string
	for _, get := range []func() ([]nvml.ProcessInfo, nvml.Return){dev.GetComputeRunningProcesses, dev.GetGraphicsRunningProcesses} {
		ps, ret := safeProcesses(get)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED:
			continue
		default:
			warn = retName(ret)
			continue
		}
		for _, p := range ps {
			out := agentv1.Process{PID: int(p.Pid), UsedMemoryMiB: int(p.UsedGpuMemory >> 20)}
			if p.GpuInstanceId != 0xFFFFFFFF {
				v := int(p.GpuInstanceId)
				out.GPUInstance = &v
			}
			if p.ComputeInstanceId != 0xFFFFFFFF {
				v := int(p.ComputeInstanceId)
				out.ComputeInstance = &v
			}
			if prev, ok := byPID[out.PID]; ok && prev.UsedMemoryMiB >= out.UsedMemoryMiB {
				continue
			}
			byPID[out.PID] = out
		}
	}
	return slices.SortedFunc(maps.Values(byPID), func(a, b agentv1.Process) int { return cmp.Compare(a.PID, b.PID) }), warn
}

func safeProcesses(get func() ([]nvml.ProcessInfo, nvml.Return)) (ps []nvml.ProcessInfo, ret nvml.Return) {
	defer func() {
		if recover() != nil {
			ps, ret = nil, nvml.ERROR_NOT_SUPPORTED
		}
	}()
	return get()
}

// callError is a failed NVML call.
type callError struct {
	what string
	ret  nvml.Return
}

func (e *callError) Error() string { return e.what + ": " + retName(e.ret) }

func noPermission(err error) bool {
	ce, ok := err.(*callError)
	return ok && ce.ret == nvml.ERROR_NO_PERMISSION
}

// lookupModel finds the catalog model of a device by the name NVML reports,
// else by its PCI device ID (an H800 or a board whose name the catalog does
// not list). A device whose PCI information cannot be read is unknown.
func lookupModel(dev nvml.Device, name string, cat *mig.Catalog) (*mig.GPU, bool) {
	if g, ok := cat.Lookup(name); ok {
		return g, true
	}
	pci, ret := dev.GetPciInfo()
	if ret != nvml.SUCCESS {
		return nil, false
	}
	return cat.LookupPCI(pci.PciDeviceId)
}
