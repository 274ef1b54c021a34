use super::*;

#[test]
fn roundtrip_f32() {
    let vals: Vec<WideNum> = [1.0, -2.5, 3.25]
        .iter()
        .map(|&v| WideNum::from_f64(v))
        .collect();
    let e = Elements::from_wide(DType::F32, vec![3], &vals).unwrap();
    assert_eq!(e.to_wide_vec(), vals);
    assert_eq!(e.contiguous_bytes().unwrap().len(), 12);
}

#[test]
fn splat_and_int4() {
    let s = Elements::splat(DType::I32, vec![2, 3], WideNum::from_i64(-7)).unwrap();
    assert!(s.is_splat());
    assert_eq!(s.len(), 6);
    assert!(s.iter().all(|v| v.i64() == -7));
    let vals: Vec<WideNum> = [-8, 7, 1].iter().map(|&v| WideNum::from_i64(v)).collect();
    let e = Elements::from_wide(DType::I4, vec![3], &vals).unwrap();
    assert_eq!(e.buffer().len(), 2);
    assert_eq!(e.to_wide_vec(), vals);
}

#[test]
fn minifloats() {
    assert_eq!(decode(DType::F8E4M3FN, 0x7e).f64(), 448.0);
    assert!(decode(DType::F8E4M3FN, 0x7f).f64().is_nan());
    assert_eq!(decode(DType::F8E5M2, 0x7b).f64(), 57344.0);
    assert_eq!(decode(DType::F4E2M1FN, 0x7).f64(), 6.0);
    assert_eq!(decode(DType::F8E8M0FNU, 127).f64(), 1.0);
}

#[test]
fn views_do_not_copy() {
    let vals: Vec<WideNum> = (0..6).map(WideNum::from_i64).collect();
    let e = Elements::from_wide(DType::I64, vec![2, 3], &vals).unwrap();
    let t = e.transposed(&[1, 0]).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    assert_eq!(
        t.iter().map(|v| v.i64()).collect::<Vec<_>>(),
        vec![0, 3, 1, 4, 2, 5]
    );
    assert_eq!(t.buffer().as_ptr(), e.buffer().as_ptr());
    let r = e.reshaped(vec![3, 2]).unwrap();
    assert_eq!(r.buffer().as_ptr(), e.buffer().as_ptr());
    let rt = t.reshaped(vec![6]).unwrap();
    assert_eq!(
        rt.iter().map(|v| v.i64()).collect::<Vec<_>>(),
        vec![0, 3, 1, 4, 2, 5]
    );
    let row = Elements::from_wide(DType::I64, vec![3], &vals[..3]).unwrap();
    let b = row.broadcast_to(&[2, 3]).unwrap();
    assert_eq!(
        b.iter().map(|v| v.i64()).collect::<Vec<_>>(),
        vec![0, 1, 2, 0, 1, 2]
    );
    assert!(row.broadcast_to(&[2, 4]).is_none());
    let m = t.materialized();
    assert!(m.contiguous_bytes().is_some());
    assert_eq!(m.to_wide_vec(), t.to_wide_vec());
}

#[test]
fn pool_counts_live_heap_buffers() {
    let before = pool::stats();
    let vals: Vec<WideNum> = (0..64).map(WideNum::from_i64).collect();
    let e = Elements::from_wide(DType::I64, vec![64], &vals).unwrap();
    let during = pool::stats();
    assert!(during.peak >= 512);
    assert!(during.count >= 1);
    let core = e
        .broadcast_to(&[2, 64])
        .unwrap()
        .broadcast_core(&[1, 64])
        .unwrap();
    assert_eq!(core.to_wide_vec(), vals);
    drop((e, core));
    // Other tests run concurrently: only check the counters moved back down.
    assert!(pool::stats().bytes <= during.bytes.max(before.bytes + 512));
}

#[test]
fn lazy_affine_blocks() {
    let vals: Vec<WideNum> = (0..6).map(|v| WideNum::from_f64(v as f64)).collect();
    let w = Elements::from_wide(DType::F32, vec![2, 3], &vals).unwrap();
    let l = w
        .affine_blocks(DType::F32, 3, vec![2.0, 0.5], vec![1.0, 0.0])
        .unwrap();
    assert!(l.is_lazy() && l.contiguous_bytes().is_none());
    let want = [1.0, 3.0, 5.0, 1.5, 2.0, 2.5];
    assert_eq!(l.iter().map(|v| v.f64()).collect::<Vec<_>>(), want);
    assert_eq!(l.get(4).unwrap().f64(), 2.0);
    let m = l.materialized();
    assert_eq!(m.to_wide_vec(), l.to_wide_vec());
    let r = l.reshaped(vec![6]).unwrap();
    assert!(r.is_lazy());
    assert_eq!(r.to_wide_vec(), l.to_wide_vec());
    let t = l.transposed(&[1, 0]).unwrap();
    assert_eq!(t.get(1).unwrap().f64(), 1.5);
    assert_eq!(l.root_buffer().as_ptr(), w.buffer().as_ptr());
    // Strided views iterate like their element-wise reads.
    let tw = w.transposed(&[1, 0]).unwrap();
    let by_get: Vec<WideNum> = (0..6).filter_map(|i| tw.get(i)).collect();
    assert_eq!(tw.to_wide_vec(), by_get);
}

#[test]
fn refuses_short_buffers() {
    let r = Elements::from_bytes(DType::F32, vec![4], Bytes::from(vec![0u8; 8]));
    assert!(r.is_err());
    let r = Elements::from_bytes(DType::F32, vec![-1], Bytes::new());
    assert!(r.is_err());
}

/// Packing any split of a view into ranges gives its packed bytes.
#[test]
fn pack_range_matches_whole_view() {
    let vals: Vec<WideNum> = (0..24).map(|v| WideNum::from_f64(v as f64 - 5.0)).collect();
    let w = Elements::from_wide(DType::F32, vec![2, 3, 4], &vals).unwrap();
    let ints: Vec<WideNum> = (0..24).map(|v| WideNum::from_i64(v % 16 - 8)).collect();
    let i4 = Elements::from_wide(DType::I4, vec![4, 6], &ints).unwrap();
    let views = [
        w.clone(),
        w.transposed(&[2, 0, 1]).unwrap(),
        Elements::from_wide(DType::F32, vec![4], &vals[..4])
            .unwrap()
            .broadcast_to(&[2, 3, 4])
            .unwrap(),
        Elements::splat(DType::I16, vec![5, 7], WideNum::from_i64(-3)).unwrap(),
        w.affine_blocks(DType::F32, 12, vec![2.0, -1.0], vec![0.5, 1.0])
            .unwrap(),
        w.affine_blocks(
            DType::F32,
            1,
            vec![2.0, -1.0, 0.5, 3.0],
            vec![0.0, 1.0, 0.0, 0.0],
        )
        .unwrap(),
        i4.transposed(&[1, 0]).unwrap(),
        i4.clone(),
    ];
    for v in &views {
        let want = v.to_contiguous_bytes();
        let by_get: Vec<WideNum> = (0..v.len()).filter_map(|i| v.get(i)).collect();
        assert_eq!(v.to_wide_vec(), by_get, "{v:?}");
        // The bulk (fast) packing holds the element-wise values.
        let packed = Elements::from_bytes(v.dtype(), v.shape().to_vec(), want.clone()).unwrap();
        assert_eq!(packed.to_wide_vec(), by_get, "{v:?}");
        for step in [3, 8, 16, 5000] {
            if step % 8 != 0 && v.dtype().bits() < 8 {
                continue; // sub-byte ranges start on a byte
            }
            let mut got = Vec::new();
            let mut at = 0;
            while at < v.len() {
                v.pack_range(at, step, &mut got);
                at += step;
            }
            assert_eq!(got, want.to_vec(), "{v:?} in ranges of {step}");
        }
        let tail: Vec<WideNum> = v.iter_range(8, 100).collect();
        assert_eq!(tail, by_get[8..].to_vec());
    }
}

/// Element-wise maps chain lazily, commute with views and round per step.
#[test]
fn lazy_map_chains() {
    let vals: Vec<WideNum> = (0..6).map(|v| WideNum::from_f64(v as f64 * 0.75)).collect();
    let w = Elements::from_wide(DType::F32, vec![2, 3], &vals).unwrap();
    let neg: MapFn = Arc::new(|x: WideNum| WideNum::from_f64(-x.f64()));
    let to_int: MapFn = Arc::new(|x: WideNum| WideNum::from_i64(x.f64().trunc() as i64));
    let l = w
        .mapped(DType::F32, neg)
        .unwrap()
        .mapped(DType::I8, to_int)
        .unwrap();
    assert!(l.is_lazy() && l.dtype() == DType::I8);
    let want: Vec<i64> = vec![0, 0, -1, -2, -3, -3];
    assert_eq!(l.iter().map(|v| v.i64()).collect::<Vec<_>>(), want);
    assert_eq!(l.root_buffer().as_ptr(), w.buffer().as_ptr());
    // A transposed map is a map of the transposed base: still lazy.
    let t = l.transposed(&[1, 0]).unwrap();
    assert!(t.is_lazy());
    assert_eq!(
        t.iter().map(|v| v.i64()).collect::<Vec<_>>(),
        vec![0, -2, 0, -3, -1, -3]
    );
    assert_eq!(l.materialized().to_wide_vec(), l.to_wide_vec());
    let f8: MapFn = Arc::new(|x: WideNum| x);
    assert!(w.mapped(DType::F8E4M3FN, f8).is_none());
}

/// Views of one buffer hold it once; it leaves the pool with the last one.
#[test]
fn pool_holds_each_buffer_once() {
    let buf = Bytes::from(vec![7u8; 4096]);
    let e = Elements::from_bytes(DType::I32, vec![32, 32], buf.clone()).unwrap();
    let t = e.transposed(&[1, 0]).unwrap();
    let b = t.broadcast_to(&[2, 32, 32]).unwrap();
    assert_eq!(pool::views_of(&buf), 3);
    assert!(pool::stats().held >= 4096);
    drop((t, b));
    assert_eq!(pool::views_of(&buf), 1);
    drop(e);
    assert_eq!(pool::views_of(&buf), 0);
}

/// Sub-byte elements unpack to one byte each (signed ones sign-extended)
/// and pack back; wider dtypes keep their bytes.
#[test]
fn unpacked_bytes_round_trip() {
    // int4 [-9 wrapped .. ]: ONNX packs low nibble first.
    let packed = Bytes::from(vec![0x87u8, 0x0f]);
    let e = Elements::from_bytes(DType::I4, vec![3], packed.clone()).unwrap();
    assert_eq!(&e.to_unpacked_bytes()[..], &[0x07, 0xf8, 0xff]);
    let back = Elements::from_unpacked_bytes(DType::I4, vec![3], e.to_unpacked_bytes()).unwrap();
    assert_eq!(&back.to_contiguous_bytes()[..], &[0x87, 0x0f]);
    let u2 = Elements::from_bytes(DType::U2, vec![4], Bytes::from(vec![0b11_10_01_00u8])).unwrap();
    assert_eq!(&u2.to_unpacked_bytes()[..], &[0, 1, 2, 3]);
    let f4 = Elements::from_bytes(DType::F4E2M1FN, vec![2], Bytes::from(vec![0x8fu8])).unwrap();
    assert_eq!(&f4.to_unpacked_bytes()[..], &[0x0f, 0x08]);
    let i8s = Elements::from_bytes(DType::I8, vec![2], Bytes::from(vec![1u8, 255])).unwrap();
    assert_eq!(&i8s.to_unpacked_bytes()[..], &[1, 255]);
    assert!(Elements::from_unpacked_bytes(DType::I4, vec![3], Bytes::from(vec![0u8; 2])).is_err());
}

/// Every code of the 8- and 4-bit formats encodes back to itself, and a
/// value halfway between two neighbours rounds to the even code.
#[test]
fn minifloat_encode_round_trips_and_ties_to_even() {
    use crate::types::FloatKind;
    for d in [
        DType::F8E4M3FN,
        DType::F8E4M3FNUZ,
        DType::F8E5M2,
        DType::F8E5M2FNUZ,
        DType::F8E8M0FNU,
        DType::F4E2M1FN,
    ] {
        let Type::Float(k) = d.to_type() else {
            unreachable!()
        };
        let fm = k.minifloat().unwrap();
        let codes = 1u64 << d.bits();
        let mut finite: Vec<(f64, u64)> = Vec::new();
        for c in 0..codes {
            let v = decode(d, c).f64();
            if v.is_nan() {
                assert!(
                    decode(d, u64::from(fm.encode(v))).f64().is_nan(),
                    "{d:?} {c:#x}"
                );
                continue;
            }
            assert_eq!(u64::from(fm.encode(v)), c, "{d:?} {v}");
            if v.is_finite() && v > 0.0 {
                finite.push((v, c));
            }
        }
        finite.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in finite.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            // f8E8M0FNU's significand is the hidden 1 alone: ties go up.
            let even = if lo.1 % 2 == 0 && fm.man > 0 {
                lo.1
            } else {
                hi.1
            };
            assert_eq!(
                u64::from(fm.encode((lo.0 + hi.0) / 2.0)),
                even,
                "{d:?} {lo:?} {hi:?}"
            );
        }
    }
    // Past the largest finite value: infinity (E5M2), NaN, or saturation.
    let e5m2 = FloatKind::F8E5M2.minifloat().unwrap();
    assert_eq!(e5m2.encode(1e9), 0x7c);
    assert_eq!(e5m2.encode(-1e9), 0xfc);
    assert_eq!(FloatKind::F8E4M3FN.minifloat().unwrap().encode(465.0), 0x7f);
    assert_eq!(FloatKind::F8E4M3FNUZ.minifloat().unwrap().encode(-1e-9), 0);
    assert_eq!(
        FloatKind::F4E2M1FN.minifloat().unwrap().encode(f64::NAN),
        0x8
    );
}

/// A splat of a value an 8-bit float holds exactly is encoded; one that
/// would need rounding (a cast's business) is refused.
#[test]
fn minifloat_splats_take_exact_values() {
    let e = Elements::splat(DType::F8E4M3FNUZ, vec![2], WideNum::from_f64(0.75)).unwrap();
    assert_eq!(e.get(1).unwrap().f64(), 0.75);
    assert!(Elements::splat(DType::F8E4M3FN, vec![2], WideNum::from_f64(0.1)).is_err());
    let n = Elements::splat(DType::F8E5M2, vec![1], WideNum::from_f64(f64::NAN)).unwrap();
    assert!(n.get(0).unwrap().f64().is_nan());
}

/// A generated tensor computes its bytes on each read and stores none;
/// views, reshapes and partial reads see the same values, and a fill of
/// the wrong length reads as zeros past its end.
#[test]
fn generated_bytes_are_computed_on_read() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let fill: FillFn = Arc::new(move |out: &mut Vec<u8>| {
        seen.fetch_add(1, Ordering::Relaxed);
        for v in 0..6i32 {
            out.extend_from_slice(&(v * 10).to_le_bytes());
        }
    });
    let e = Elements::generated(DType::I32, vec![2, 3], fill).unwrap();
    assert!(e.is_generated() && e.is_lazy() && !e.is_splat());
    assert_eq!(e.buffer_bytes(), 0);
    assert_eq!(calls.load(Ordering::Relaxed), 0);
    let want: Vec<i64> = (0..6).map(|v| v * 10).collect();
    assert_eq!(e.iter().map(|v| v.i64()).collect::<Vec<_>>(), want);
    let mut out = vec![9u8];
    e.pack_range(0, 6, &mut out);
    assert_eq!((out.len(), out[0]), (25, 9));
    assert_eq!(e.to_contiguous_bytes().as_ref(), &out[1..]);
    assert_eq!(e.get(4).map(|v| v.i64()), Some(40));
    let t = e.transposed(&[1, 0]).unwrap();
    assert_eq!(
        t.iter().map(|v| v.i64()).collect::<Vec<_>>(),
        [0, 30, 10, 40, 20, 50]
    );
    let r = e.reshaped(vec![3, 2]).unwrap();
    assert!(r.is_generated());
    assert_eq!(
        r.iter_range(2, 3).map(|v| v.i64()).collect::<Vec<_>>(),
        [20, 30, 40]
    );
    assert!(calls.load(Ordering::Relaxed) >= 5);

    let short: FillFn = Arc::new(|out: &mut Vec<u8>| out.push(1));
    let s = Elements::generated(DType::I16, vec![2], short).unwrap();
    assert_eq!(s.to_contiguous_bytes().as_ref(), &[1, 0, 0, 0]);
    assert!(Elements::generated(DType::I16, vec![-1], Arc::new(|_: &mut Vec<u8>| {})).is_err());
}
