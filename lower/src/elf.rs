//! The weights blob as a relocatable ELF object, written by onnxc itself.
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
use std::io::Write;

const EHDR: u64 = 64;
const SHDR: u64 = 64;
const SYM: u64 = 24;
const DATA_ALIGN: u64 = 64;

const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHF_ALLOC: u64 = 2;
const SHF_X86_64_LARGE: u64 = 0x1000_0000;

/// The ELF machine of the host, when it is one this writer supports
/// (64-bit little-endian).
pub fn host_machine() -> Option<u16> {
    match std::env::consts::ARCH {
        "x86_64" => Some(62),
        "aarch64" => Some(183),
        "riscv64" => Some(243),
        _ => None,
    }
}

/// Section names, in section-header order after the null section.
const NAMES: [&str; 5] = [
    WEIGHTS_SECTION,
    ".note.GNU-stack",
    ".symtab",
    ".strtab",
    ".shstrtab",
];

/// Writes the object for `layout` (the globals of `m`) for ELF `machine`.
pub fn write_weights_object(
    m: &Module,
    layout: &WeightLayout,
    machine: u16,
    out: &mut dyn Write,
) -> Result<()> {
    let io = |e: std::io::Error| Diagnostic::error(format!("cannot write the weights object: {e}"));
    let size = layout.size;
    let mut shstrtab = vec![0u8];
    let mut name_at = Vec::new();
    for n in NAMES {
        name_at.push(shstrtab.len() as u32);
        shstrtab.extend_from_slice(n.as_bytes());
        shstrtab.push(0);
    }
    let strtab = [&[0u8][..], WEIGHTS_SYM.as_bytes(), &[0]].concat();
    // File layout: header, blob, symbols, strings, section headers.
    let data_at = EHDR.next_multiple_of(DATA_ALIGN);
    let sym_at = (data_at + size).next_multiple_of(8);
    let str_at = sym_at + 2 * SYM;
    let shstr_at = str_at + strtab.len() as u64;
    let sh_at = (shstr_at + shstrtab.len() as u64).next_multiple_of(8);

    let mut head = Vec::with_capacity(data_at as usize);
    head.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    head.extend_from_slice(&[0; 8]);
    head.extend_from_slice(&1u16.to_le_bytes()); // ET_REL
    head.extend_from_slice(&machine.to_le_bytes());
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes()); // entry
    head.extend_from_slice(&0u64.to_le_bytes()); // program headers
    head.extend_from_slice(&sh_at.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes()); // flags
    head.extend_from_slice(&(EHDR as u16).to_le_bytes());
    head.extend_from_slice(&0u16.to_le_bytes());
    head.extend_from_slice(&0u16.to_le_bytes());
    head.extend_from_slice(&(SHDR as u16).to_le_bytes());
    head.extend_from_slice(&(NAMES.len() as u16 + 1).to_le_bytes());
    head.extend_from_slice(&(NAMES.len() as u16).to_le_bytes()); // .shstrtab
    head.resize(data_at as usize, 0);
    out.write_all(&head).map_err(io)?;

    layout.write(m, out)?;

    let mut tail = vec![0u8; (sym_at - data_at - size) as usize];
    tail.extend_from_slice(&[0; SYM as usize]);
    tail.extend_from_slice(&1u32.to_le_bytes()); // name
    tail.push(0x11); // STB_GLOBAL, STT_OBJECT
    tail.push(2); // STV_HIDDEN
    tail.extend_from_slice(&1u16.to_le_bytes()); // in the blob's section
    tail.extend_from_slice(&0u64.to_le_bytes());
    tail.extend_from_slice(&size.to_le_bytes());
    tail.extend_from_slice(&strtab);
    tail.extend_from_slice(&shstrtab);
    // `tail` starts where the blob ends, before the padding to `sym_at`.
    tail.resize((sh_at - data_at - size) as usize, 0);
    tail.extend_from_slice(&[0; SHDR as usize]);
    let sh = |ty, flags, off, len, link, info, align, entsize| Shdr {
        ty,
        flags,
        off,
        len,
        link,
        info,
        align,
        entsize,
    };
    let blob_flags = match LARGE_WEIGHTS {
        true => SHF_ALLOC | SHF_X86_64_LARGE,
        false => SHF_ALLOC,
    };
    let headers = [
        sh(SHT_PROGBITS, blob_flags, data_at, size, 0, 0, DATA_ALIGN, 0),
        sh(SHT_PROGBITS, 0, data_at, 0, 0, 0, 1, 0),
        sh(SHT_SYMTAB, 0, sym_at, 2 * SYM, 4, 1, 8, SYM),
        sh(SHT_STRTAB, 0, str_at, strtab.len() as u64, 0, 0, 1, 0),
        sh(SHT_STRTAB, 0, shstr_at, shstrtab.len() as u64, 0, 0, 1, 0),
    ];
    for (&name, h) in name_at.iter().zip(headers) {
        h.write(name, &mut tail);
    }
    out.write_all(&tail).map_err(io)
}

/// One section header (ELF64).
struct Shdr {
    ty: u32,
    flags: u64,
    off: u64,
    len: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

impl Shdr {
    fn write(&self, name: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(&name.to_le_bytes());
        out.extend_from_slice(&self.ty.to_le_bytes());
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // address
        out.extend_from_slice(&self.off.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.link.to_le_bytes());
        out.extend_from_slice(&self.info.to_le_bytes());
        out.extend_from_slice(&self.align.to_le_bytes());
        out.extend_from_slice(&self.entsize.to_le_bytes());
    }
}
