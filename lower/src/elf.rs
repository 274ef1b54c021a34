//! The weights blob as a relocatable ELF object, streamed through the
//! `object` crate's ELF writer.
//!
//! Why not `.incbin`: the assembler holds the whole blob in memory (about
//! twice its size), and it runs only after the LLVM IR is optimized. This
//! object is streamed one global at a time while clang compiles the code,
//! and the linker copies it into the library.
//!
//! Contents: section `WEIGHTS_SECTION` (alloc, read-only, large data on
//! x86-64: see `LARGE_WEIGHTS`; 64-byte aligned) holding the blob, the
//! hidden global symbol `__onnxc_weights` at its start, and an empty
//! `.note.GNU-stack` (no executable stack).

use crate::llvm::{WeightLayout, LARGE_WEIGHTS, WEIGHTS_SECTION, WEIGHTS_SYM};
use ir::{Diagnostic, Module, Result};
use object::elf;
use object::write::elf::{FileHeader, SectionHeader, Sym, Writer};
use object::write::StreamingBuffer;
use object::Endianness;
use std::io::Write;

const DATA_ALIGN: usize = 64;
/// x86-64 psABI large-section flag (`l`), which `object` does not name.
const SHF_X86_64_LARGE: u32 = 0x1000_0000;

/// The ELF machine of the host, when it is one this writer supports
/// (64-bit little-endian).
pub fn host_machine() -> Option<u16> {
    match std::env::consts::ARCH {
        "x86_64" => Some(elf::EM_X86_64),
        "aarch64" => Some(elf::EM_AARCH64),
        "riscv64" => Some(elf::EM_RISCV),
        _ => None,
    }
}

/// Writes the object for `layout` (the globals of `m`) for ELF `machine`.
/// Sections: the blob, `.note.GNU-stack`, `.symtab`, `.strtab`,
/// `.shstrtab`; the blob goes out one global at a time.
pub fn write_weights_object(
    m: &Module,
    layout: &WeightLayout,
    machine: u16,
    out: &mut dyn Write,
) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| {
        Diagnostic::error(format!("cannot write the weights object: {e}"))
    };
    let size = layout.size;
    let blob_len = usize::try_from(size)
        .map_err(|_| Diagnostic::error(format!("{size} bytes of weights do not fit in memory")))?;
    let mut buffer = StreamingBuffer::new(out);
    let mut w = Writer::new(Endianness::Little, true, &mut buffer);
    // Layout: header, blob, symbols, strings, section headers.
    w.reserve_file_header();
    let blob_name = w.add_section_name(WEIGHTS_SECTION.as_bytes());
    let stack_name = w.add_section_name(b".note.GNU-stack");
    w.reserve_null_section_index();
    let blob_section = w.reserve_section_index();
    w.reserve_section_index();
    let sym_name = w.add_string(WEIGHTS_SYM.as_bytes());
    w.reserve_null_symbol_index();
    w.reserve_symbol_index(Some(blob_section));
    w.reserve_symtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_shstrtab_section_index();
    let blob_at = w.reserve(blob_len, DATA_ALIGN);
    w.reserve_symtab();
    w.reserve_strtab();
    w.reserve_shstrtab();
    w.reserve_section_headers();

    w.write_file_header(&FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_REL,
        e_machine: machine,
        e_entry: 0,
        e_flags: 0,
    })
    .map_err(|e| fail(&e))?;
    w.write_align(DATA_ALIGN);
    layout.write(m, &mut Blob(&mut w))?;
    w.write_null_symbol();
    w.write_symbol(&Sym {
        name: Some(sym_name),
        section: Some(blob_section),
        st_info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
        st_other: elf::STV_HIDDEN,
        st_shndx: 0,
        st_value: 0,
        st_size: size,
    });
    w.write_strtab();
    w.write_shstrtab();
    w.write_null_section_header();
    let blob_flags = match LARGE_WEIGHTS {
        true => elf::SHF_ALLOC | SHF_X86_64_LARGE,
        false => elf::SHF_ALLOC,
    };
    let section = |name, flags: u32, offset: usize, size: u64, align: usize| SectionHeader {
        name: Some(name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: u64::from(flags),
        sh_addr: 0,
        sh_offset: offset as u64,
        sh_size: size,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: align as u64,
        sh_entsize: 0,
    };
    w.write_section_header(&section(blob_name, blob_flags, blob_at, size, DATA_ALIGN));
    w.write_section_header(&section(stack_name, 0, blob_at, 0, 1));
    // One local symbol: the null one.
    w.write_symtab_section_header(1);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    buffer.result().map_err(|e| fail(&e))
}

/// The blob's bytes into the writer (its buffer keeps the first I/O error).
struct Blob<'w, 'a>(&'w mut Writer<'a>);

impl Write for Blob<'_, '_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.write(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
