package managed

import (
	"debug/elf"
	"fmt"
)

// Build describes how a server's executable was built: seed 002's comparison of Firebird 3
// against Firebird 4 went wrong on a 32-bit build against a 64-bit one.
type Build struct {
	// Bits is the executable's word size, 32 or 64.
	Bits int
	// Arch is its instruction set as uname -m spells it (x86_64, i386, aarch64, arm, ...).
	Arch string
}

// machines maps ELF machine numbers to uname -m's names.
var machines = map[elf.Machine]string{
	elf.EM_X86_64: "x86_64", elf.EM_386: "i386", elf.EM_AARCH64: "aarch64", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64", elf.EM_PPC: "ppc", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv", elf.EM_MIPS: "mips",
	elf.EM_LOONGARCH: "loongarch64", elf.EM_SPARCV9: "sparc64",
}

// ExecutableBuild reads the ELF header of the program process pid runs (/proc/PID/exe):
// what a managed server's build is, whatever the product. It needs the right to read that
// link: the process's owner or root.
func ExecutableBuild(pid int) (Build, error) {
	return FileBuild(fmt.Sprintf("/proc/%d/exe", pid))
}

// FileBuild reads the ELF header of the executable at path.
func FileBuild(path string) (Build, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Build{}, err
	}
	defer f.Close()
	b := Build{Bits: 64, Arch: machines[f.Machine]}
	if f.Class == elf.ELFCLASS32 {
		b.Bits = 32
	}
	if b.Arch == "" {
		b.Arch = f.Machine.String()
	}
	if b.Arch == "riscv" {
		b.Arch = fmt.Sprintf("riscv%d", b.Bits)
	}
	return b, nil
}
