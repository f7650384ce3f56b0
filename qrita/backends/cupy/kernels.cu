// qrita backend "cupy": exact Top-k / Top-p selection as CUDA C++ (builds under HIP too).
//
// The host prepends the generated preamble (qrita.core.cgen: spec constants, key
// mapping, LUTs, the state-machine functions qrita_pivot, qrita_classify_pivot,
// ...) and defines QRITA_WARP_SIZE from the device.  docs/porting.md explains the
// layout; shared/ALGORITHM.md the method.  In short, per row:
//
//   row_setup      k/p of the row, sample stats of the first SAMPLE_SIZE entries,
//                  the sigma-truncation cut (a key)
//   pass_chunks    one read of the row: candidates (key > cut) gathered in index
//                  order by block prefix sums, row max/min/keepable counts, and for
//                  top-p-only rows the per-chunk softmax partials
//   search_row     the pivot search of qrita.core.search over the candidates (the
//                  whole row on a miss), top-k then top-p, tie rules from core
//   mask_cols      mask_value wherever the entry is not kept
//
// Exactness and determinism: every statistic the search uses is an integer (counts,
// min/max keys, top-p masses in 64-bit fixed point), so block atomics on them give
// order-independent results; the only float sum (the softmax denominator of a
// top-p-only row) is reduced per fixed CHUNK and combined in chunk order.  The
// answer therefore does not depend on the grid: one block per row and the split
// path (several blocks per row, combined in order) are bit-identical.

#ifndef QRITA_WARP_SIZE
#error "QRITA_WARP_SIZE must be defined by the host (the device's warp size)"
#endif

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define QRITA_HIP 1
#endif

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned short u16;

// Block geometry, from the host (qrita/backends/cupy/_module.py: 256 threads for the kernels
// that stream rows, 512 for combine): QRITA_THREADS threads a block, QRITA_ITEMS entries a
// thread per chunk.  The chunk itself is fixed: its softmax partials never depend on the grid
// or the geometry.
#if !defined(QRITA_THREADS) || !defined(QRITA_ITEMS)
#error "QRITA_THREADS and QRITA_ITEMS must be defined by the host (the block geometry)"
#endif
#define QRITA_CHUNK (QRITA_THREADS * QRITA_ITEMS)
#if QRITA_CHUNK != 4096 || (QRITA_ITEMS % 8) != 0
#error "a chunk is 4096 entries, and a thread's part of it whole 16-byte accesses of 16-bit entries"
#endif
#define QRITA_NWARPS (QRITA_THREADS / QRITA_WARP_SIZE)
#define QRITA_SAMPLE_LANES 256  // the threads that read the sample (row_setup), in every geometry
#if QRITA_THREADS < QRITA_SAMPLE_LANES
#error "blocks of at least QRITA_SAMPLE_LANES threads"
#endif
#define QRITA_PER_VEC(Tr) ((int)(16 / sizeof(typename Tr::bits_t)))  // entries per 16-byte access
#define QRITA_CAP QRITA_CANDIDATE_CAPACITY
#define QRITA_WIDE_PIVOTS 255                          // 8 key bits a round on large live sets
#define QRITA_NBINS (QRITA_WIDE_PIVOTS + 1)
#define QRITA_BINS_PER_LANE (QRITA_NBINS / QRITA_WARP_SIZE)
#define QRITA_SMALL_LIVE 64                            // live sets this small use NUM_PIVOTS
#define QRITA_RETRY_K 4                                // a top-k row's second cut: for 4k entries
#define QRITA_EMPTY_KEY 0xffffffffu                    // "keeps nothing": above every key
#define QRITA_ALL_TIES 0x7fffffff                      // tie_last when the whole tie group is kept
// bits of the kernels' `vec` argument
#define QRITA_VEC_IN 1   // input rows are contiguous and 16-byte aligned
#define QRITA_VEC_OUT 2  // so are the output rows of the masking
#define QRITA_FAST 4     // opt-in: row scans and masking two chunks at a time with 16-byte accesses

#if (QRITA_NBINS % QRITA_WARP_SIZE) != 0 || QRITA_NWARPS > QRITA_WARP_SIZE
#error "unsupported warp size"
#endif

// ---- warp primitives: CUDA needs the *_sync forms, HIP has no masks -------------------------
#ifdef QRITA_HIP
#define QRITA_SHFL_XOR(v, m) __shfl_xor((v), (m), QRITA_WARP_SIZE)
#define QRITA_SHFL_UP(v, d) __shfl_up((v), (d), QRITA_WARP_SIZE)
#define QRITA_SHFL_DOWN(v, d) __shfl_down((v), (d), QRITA_WARP_SIZE)
#define QRITA_BOUNDS __launch_bounds__(QRITA_THREADS)
#else
#if QRITA_WARP_SIZE != 32
#error "on CUDA, QRITA_WARP_SIZE must be the warp size of the device"
#endif
#define QRITA_FULL_MASK 0xffffffffu
#define QRITA_SHFL_XOR(v, m) __shfl_xor_sync(QRITA_FULL_MASK, (v), (m))
#define QRITA_SHFL_UP(v, d) __shfl_up_sync(QRITA_FULL_MASK, (v), (d))
#define QRITA_SHFL_DOWN(v, d) __shfl_down_sync(QRITA_FULL_MASK, (v), (d))
// 1024 threads per SM (64 registers a thread): while one block searches, another streams its
// row (NVRTC gave the select kernel 115 registers without it, and one block per SM ran 1.5x slower)
#define QRITA_BOUNDS __launch_bounds__(QRITA_THREADS, 1024 / QRITA_THREADS)
#endif

// ---- thread-block clusters (Hopper and newer, CUDA only) --------------------------------------
// QRITA_CLUSTER > 1 (the host defines it for sm_90+ devices, never under HIP) adds the split
// path's cluster combine (ccombine_kernel), QRITA_CLUSTER blocks a row.  Block 0 of a cluster
// (the leader) combines and searches the row as the plain combine does; when it searches the
// whole row (a truncation miss), it posts the search to the others (the followers), and each
// block histograms its slice of the row.  The bins are summed over distributed shared memory
// (integers: the same totals in any order), and every block runs the same state machine on the
// same totals, so their control flow stays identical and every cluster barrier is reached by
// all of them.  Rows that hit cost the followers two barriers.  Without clusters (HIP, sm_80)
// the path is not compiled and the host takes the plain combine.  CUDA's cluster intrinsics
// (sm_90_rt.h), no inline PTX.
#ifndef QRITA_CLUSTER
#define QRITA_CLUSTER 1
#endif
#if QRITA_CLUSTER > 1
#if defined(QRITA_HIP) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)
#error "QRITA_CLUSTER > 1 needs thread-block clusters (sm_90 or newer, CUDA)"
#endif
#if QRITA_CLUSTER > 8 || QRITA_THREADS < QRITA_WIDE_PIVOTS + 1
#error "clusters of at most 8 blocks (portable), and a thread per bin"
#endif
__device__ __forceinline__ u32 cluster_rank() { return __clusterRelativeBlockRank(); }
// Every thread of every block of the cluster arrives; what each wrote before (shared memory
// included) is visible to all after (arrive has release, wait acquire semantics).
__device__ __forceinline__ void cluster_barrier() {
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
}
// The same shared-memory object in block `rank` of the cluster (a generic address).
template <class T>
__device__ __forceinline__ const volatile T* cluster_peer(const T* p, u32 rank) {
    return static_cast<const volatile T*>(__cluster_map_shared_rank(const_cast<T*>(p), rank));
}
#endif

// ---- dtypes: raw bits in memory (16-bit stays 16-bit), keys from the preamble -------------
struct qrita_float32 {
    typedef u32 bits_t;
    static constexpr u32 NAN_BITS = 0x7fc00000u;
    static constexpr u32 KEY_NEG_INF = QRITA_FLOAT32_KEY_NEG_INF;
    static constexpr u32 KEY_POS_INF = QRITA_FLOAT32_KEY_POS_INF;
    static constexpr int MAX_ROUNDS = QRITA_MAX_ROUNDS_32;
    static __device__ __forceinline__ u32 key(bits_t b) { return qrita_key_from_bits_float32(b); }
    static __device__ __forceinline__ bits_t bits(u32 k) { return qrita_bits_from_key_float32(k); }
    static __device__ __forceinline__ float value(bits_t b) { return __uint_as_float(b); }
    // the cut as a value of this dtype (false when it is not finite here)
    static __device__ __forceinline__ bool cut_bits(double t, bits_t* out) {
        u32 u = __float_as_uint((float)t);
        if ((u & 0x7f800000u) == 0x7f800000u) return false;
        *out = u;
        return true;
    }
};

struct qrita_bfloat16 {
    typedef u16 bits_t;
    static constexpr u16 NAN_BITS = 0x7fc0u;
    static constexpr u32 KEY_NEG_INF = QRITA_BFLOAT16_KEY_NEG_INF;
    static constexpr u32 KEY_POS_INF = QRITA_BFLOAT16_KEY_POS_INF;
    static constexpr int MAX_ROUNDS = QRITA_MAX_ROUNDS_16;
    static __device__ __forceinline__ u32 key(bits_t b) { return qrita_key_from_bits_bfloat16(b); }
    static __device__ __forceinline__ bits_t bits(u32 k) { return qrita_bits_from_key_bfloat16(k); }
    static __device__ __forceinline__ float value(bits_t b) { return __uint_as_float(((u32)b) << 16); }
    static __device__ __forceinline__ bool cut_bits(double t, bits_t* out) {
        u32 u = __float_as_uint((float)t);
        if ((u & 0x7f800000u) == 0x7f800000u) return false;
        *out = (bits_t)(u >> 16);  // truncation: still a value, so still a valid cut
        return true;
    }
};

struct qrita_float16 {
    typedef u16 bits_t;
    static constexpr u16 NAN_BITS = 0x7e00u;
    static constexpr u32 KEY_NEG_INF = QRITA_FLOAT16_KEY_NEG_INF;
    static constexpr u32 KEY_POS_INF = QRITA_FLOAT16_KEY_POS_INF;
    static constexpr int MAX_ROUNDS = QRITA_MAX_ROUNDS_16;
    static __device__ __forceinline__ u32 key(bits_t b) { return qrita_key_from_bits_float16(b); }
    static __device__ __forceinline__ bits_t bits(u32 k) { return qrita_bits_from_key_float16(k); }
    // exact half -> float by bit manipulation (no cuda_fp16.h: nothing to find at run time)
    static __device__ __forceinline__ float value(bits_t b) {
        u32 sign = ((u32)b & 0x8000u) << 16;
        u32 e = ((u32)b >> 10) & 0x1fu;
        u32 m = (u32)b & 0x3ffu;
        if (e == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (m << 13));
        if (e == 0u) {
            float v = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
            return sign ? -v : v;
        }
        return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
    }
    static __device__ __forceinline__ bool cut_bits(double t, bits_t* out) {
        u32 u = __float_as_uint((float)t);
        if ((u & 0x7f800000u) == 0x7f800000u) return false;
        u32 sign = (u >> 16) & 0x8000u;
        int e = (int)((u >> 23) & 0xffu) - 127 + 15;
        u32 mant = u & 0x7fffffu;
        if (e >= 31) return false;  // beyond the half range: no cut
        u32 h;
        if (e <= 0) {               // rounds toward zero into the subnormals
            h = (e < -10) ? sign : (sign | ((mant | 0x800000u) >> (14 - e)));
        } else {
            h = sign | ((u32)e << 10) | (mant >> 13);
        }
        *out = (bits_t)h;
        return true;
    }
};

// ---- shared memory of one block ---------------------------------------------------------------
struct Smem {
    u32 cand_key[QRITA_CAP];  // candidates in index order
    int cand_col[QRITA_CAP];
    // per-bin counts and masses of a round.  A mass is two u32 words, low and high: 64-bit
    // shared atomics compile to compare-and-swap loops (sm_90), 32-bit adds are native.
    u32 bin_cnt[QRITA_NBINS];
    u32 bin_mlo[QRITA_NBINS];
    u32 bin_mhi[QRITA_NBINS];
    u32 tau[QRITA_NBINS];     // tau[j - 1] = pivot j
    u64 red[QRITA_NWARPS + 1];
    u32 scan[QRITA_NWARPS];
    u64 bcast[10];
#if QRITA_CLUSTER > 1
    u32 bin_pre[QRITA_NBINS];  // a bin's count in the cluster's blocks before this one
    u32 pass2[3];              // this block's Pass2 (zmn, n, zmx), for the cluster's merge
    u64 post[4];               // the leader's post: {op, lo, hi, target} or {DONE, thr_key, tie_last}
    float post_m;              // and the search's weights (Weights::m, m_inf)
    int post_m_inf;
#endif
};

// The block's shared memory, at namespace scope so that non-inlined functions address it as
// shared memory (a reference parameter would become a generic pointer).
__shared__ Smem qrita_sm;

struct Partial {  // integer partials of a slice of a row: combined in any order, same result
    u32 max_key;  // the largest key (a live one whenever n_keep > 0)
    u32 n_keep;   // keepable entries (not NaN, not -inf)
    u32 n_cand;   // candidates (keys above the cut)
};

struct ZPart {    // softmax partial of one CHUNK: sum of exp(x - m) over its keepable entries
    float m;
    float pad;
    double s;
};

struct RowInfo {  // what masking needs of a row
    u32 thr_key;
    int tie_last;
};

struct RowCut {   // a row's cuts, from the split path's partial kernel (slice 0) to its combine
    u32 cut_key;
    u32 cut2_key;
    int cut_ok;
    int cut2_ok;
};

// The host sizes the scratch with these (qrita/backends/cupy/_module.py).
static_assert(sizeof(Partial) == 12, "Partial is 12 bytes on the host side");
static_assert(sizeof(ZPart) == 16, "ZPart is 16 bytes on the host side");
static_assert(sizeof(RowInfo) == 8, "RowInfo is 8 bytes on the host side");
static_assert(sizeof(RowCut) == 16, "RowCut is 16 bytes on the host side");

struct OpSum {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct OpMin {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct OpMax {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};

template <typename T, typename Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
    for (int o = QRITA_WARP_SIZE / 2; o > 0; o >>= 1) v = op(v, QRITA_SHFL_XOR(v, o));
    return v;
}

// Every thread gets the block's reduction (fixed tree: deterministic for floats too).
template <typename T, typename Op>
__device__ T block_allreduce(T v, Op op, T identity) {
    T* buf = reinterpret_cast<T*>(qrita_sm.red);
    const int lane = threadIdx.x % QRITA_WARP_SIZE, warp = threadIdx.x / QRITA_WARP_SIZE;
    v = warp_allreduce(v, op);
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T w = lane < QRITA_NWARPS ? buf[lane] : identity;
        w = warp_allreduce(w, op);
        if (lane == 0) buf[QRITA_NWARPS] = w;
    }
    __syncthreads();
    T r = buf[QRITA_NWARPS];
    __syncthreads();
    return r;
}

// Exclusive prefix sum over the block in thread order; *total gets the sum.
__device__ u32 block_exclusive_scan(u32 v, u32* total) {
    const int lane = threadIdx.x % QRITA_WARP_SIZE, warp = threadIdx.x / QRITA_WARP_SIZE;
    u32 x = v;
    for (int o = 1; o < QRITA_WARP_SIZE; o <<= 1) {
        u32 t = QRITA_SHFL_UP(x, o);
        if (lane >= o) x += t;
    }
    if (lane == QRITA_WARP_SIZE - 1) qrita_sm.scan[warp] = x;
    __syncthreads();
    if (warp == 0) {
        u32 w = lane < QRITA_NWARPS ? qrita_sm.scan[lane] : 0u;
        for (int o = 1; o < QRITA_WARP_SIZE; o <<= 1) {
            u32 t = QRITA_SHFL_UP(w, o);
            if (lane >= o) w += t;
        }
        if (lane < QRITA_NWARPS) qrita_sm.scan[lane] = w;
    }
    __syncthreads();
    u32 before = warp > 0 ? qrita_sm.scan[warp - 1] : 0u;
    *total = qrita_sm.scan[QRITA_NWARPS - 1];
    __syncthreads();
    return before + x - v;
}

// ---- row parameters and the sigma-truncation cut --------------------------------------------
struct RowParams {
    i64 k;
    int k_active;  // 0 < k < V
    int p_mode;    // 0: no top-p, 1: top-1 (p <= 0), 2: top-p
    double p;
    int cut_ok;
    u32 cut_key;   // candidates are the keys above it
    int cut2_ok;   // a top-k row's second cut (regather)
    u32 cut2_key;
};

struct RowArgs {   // kernel arguments shared by every kernel that sets a row up
    i64 k_scalar;
    const i64* k_rows;
    double p_scalar;
    const void* p_rows;
    int p_kind;    // 0: scalar, 1: float32 [B], 2: float64 [B]
    int truncation;
    int second_cut;  // second cuts: top-p rows above a count-based cut, top-k rows that miss (row_setup)
};

// ``truncation`` of the kernels: bit 0 the sigma truncation, bit 1 the second cut of top-p rows.
__device__ __forceinline__ RowArgs row_args(i64 k_scalar, const i64* k_rows, double p_scalar, const void* p_rows,
                                            int p_kind, int truncation) {
    return RowArgs{k_scalar, k_rows, p_scalar, p_rows, p_kind, truncation & 1, (truncation >> 1) & 1};
}

// The row's request: k and p, no cut yet.
__device__ __forceinline__ RowParams row_request(int V, int row, const RowArgs& a) {
    RowParams rp;
    i64 k = a.k_rows ? a.k_rows[row] : a.k_scalar;
    rp.k = k;
    rp.k_active = (k > 0 && k < (i64)V) ? 1 : 0;
    double p = a.p_scalar;
    if (a.p_kind == 1) p = (double)static_cast<const float*>(a.p_rows)[row];
    if (a.p_kind == 2) p = static_cast<const double*>(a.p_rows)[row];
    if (p != p) p = 1.0;  // NaN: no top-p
    rp.p = p;
    rp.p_mode = p >= 1.0 ? 0 : (p <= 0.0 ? 1 : 2);
    rp.cut_ok = 0;
    rp.cut_key = 0;
    rp.cut2_ok = 0;
    rp.cut2_key = 0;
    return rp;
}

// The row's cuts (rp.cut_*, rp.cut2_*) from the sample statistics of its first SAMPLE_SIZE entries.
template <class Tr>
__device__ void row_cut(const typename Tr::bits_t* xrow, i64 stride_v, int V, const RowArgs& a, RowParams& rp) {
    const i64 k = rp.k;
    const double p = rp.p;

    // mean and std of the finite entries among the first SAMPLE_SIZE (float64, two passes)
    // (SAMPLE_LANES threads read the sample whatever the block size, so that kernels of either
    // geometry get the same float sums, the same cut: the split path's partial and combine
    // kernels agree on it, and so do they with select_kernel)
    const int n = V < QRITA_SAMPLE_SIZE ? V : QRITA_SAMPLE_SIZE;
    const int lanes = threadIdx.x < QRITA_SAMPLE_LANES ? n : 0;
    double s = 0.0;
    u32 cnt = 0;
    for (int i = threadIdx.x; i < lanes; i += QRITA_SAMPLE_LANES) {
        typename Tr::bits_t b = xrow[(i64)i * stride_v];
        u32 key = Tr::key(b);
        if (key > Tr::KEY_NEG_INF && key < Tr::KEY_POS_INF) {
            s += (double)Tr::value(b);
            ++cnt;
        }
    }
    u32 n_finite = block_allreduce(cnt, OpSum(), 0u);
    double total = block_allreduce(s, OpSum(), 0.0);
    if (n_finite < 2) return;
    double mu = total / (double)n_finite;
    double q = 0.0;
    for (int i = threadIdx.x; i < lanes; i += QRITA_SAMPLE_LANES) {
        typename Tr::bits_t b = xrow[(i64)i * stride_v];
        u32 key = Tr::key(b);
        if (key > Tr::KEY_NEG_INF && key < Tr::KEY_POS_INF) {
            double d = (double)Tr::value(b) - mu;
            q += d * d;
        }
    }
    double sigma = sqrt(block_allreduce(q, OpSum(), 0.0) / (double)n_finite);
    double delta = rp.k_active ? (double)qrita_topk_delta[qrita_topk_lut_index<int>(k, V)]
                               : (double)qrita_topp_delta[qrita_topp_lut_index<int>(p)] + sigma;
    double t = mu + delta * sigma;
    if (!rp.k_active && a.second_cut) {
        // A top-p row whose model puts more than CAP entries above t would overflow the buffer
        // and search the whole row.  It gathers above the top-k cut for CAP / 4 entries instead:
        // rows whose mass sits in a few strong logits over a wide floor then hit (the search
        // over the candidates checks that their mass reaches the target; else the row is searched).
        const double n_eff = fmax((double)n_finite * ((double)V / (double)n), 1.0);
        if (n_eff > (double)QRITA_CAP) {
            const double t_cap = mu + (double)qrita_topk_delta[qrita_topk_lut_index<int>((double)QRITA_CAP, n_eff)] * sigma;
            const double t2 =
                mu + (double)qrita_topk_delta[qrita_topk_lut_index<int>((double)(QRITA_CAP / 4), n_eff)] * sigma;
            if (t < t_cap && t2 > t) t = t2;
        }
    }
    typename Tr::bits_t cut;
    if (Tr::cut_bits(t, &cut)) {
        rp.cut_ok = 1;
        rp.cut_key = Tr::key(cut);
    }
    if (rp.cut_ok && rp.k_active && a.second_cut) {
        // A top-k row whose cut holds fewer than k entries (the sample's sigma a little high)
        // gathers again above the cut for RETRY_K * k entries (regather), at most CAP / 2 and
        // fewer than half the row, before it would search the whole row.
        const double k2 = fmin((double)QRITA_RETRY_K * (double)k, (double)(QRITA_CAP / 2));
        typename Tr::bits_t cut2;
        if (k2 > (double)k && 2.0 * k2 < (double)V &&
            Tr::cut_bits(mu + (double)qrita_topk_delta[qrita_topk_lut_index<int>(k2, V)] * sigma, &cut2) &&
            Tr::key(cut2) < rp.cut_key) {
            rp.cut2_ok = 1;
            rp.cut2_key = Tr::key(cut2);
        }
    }
}

template <class Tr>
__device__ RowParams row_setup(const typename Tr::bits_t* xrow, i64 stride_v, int V, int row, const RowArgs& a) {
    RowParams rp = row_request(V, row, a);
    if (!a.truncation || !(rp.k_active || rp.p_mode == 2)) return rp;
    row_cut<Tr>(xrow, stride_v, V, a, rp);
    return rp;
}

// ---- the pass ---------------------------------------------------------------------------------
struct PassState {  // per-thread running partials
    u32 max_key, n_keep;
};

__device__ __forceinline__ void pass_state_init(PassState& ps) {
    ps.max_key = 0u;
    ps.n_keep = 0u;
}

// ITEMS consecutive entries from col0 (NaN bits past the end: NaN is never anything)
template <class Tr>
__device__ __forceinline__ void load_items(const typename Tr::bits_t* xrow, i64 stride_v, int V, int vec, int col0,
                                           typename Tr::bits_t (&b)[QRITA_ITEMS]) {
    if (vec && col0 + QRITA_ITEMS <= V) {
        const uint4* p = reinterpret_cast<const uint4*>(xrow + col0);
#pragma unroll
        for (int g = 0; g < QRITA_ITEMS / QRITA_PER_VEC(Tr); ++g) {
            const uint4 v = p[g];
            const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if constexpr (sizeof(typename Tr::bits_t) == 2) {
                    b[8 * g + 2 * i] = (u16)(w[i] & 0xffffu);
                    b[8 * g + 2 * i + 1] = (u16)(w[i] >> 16);
                } else {
                    b[4 * g + i] = w[i];
                }
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) {
            int c = col0 + i;
            b[i] = c < V ? xrow[(i64)c * stride_v] : (typename Tr::bits_t)Tr::NAN_BITS;
        }
    }
}

// One CHUNK of a row, its entries b loaded.  Candidates go to ckey/ccol[*n_cand ...] (while
// < CAP) in index order; *n_cand counts all of them.  Uniform control flow: every thread calls it.
template <class Tr>
__device__ __forceinline__ void pass_chunk(const typename Tr::bits_t (&b)[QRITA_ITEMS], int chunk,
                                           const RowParams& rp, bool need_z, PassState& ps, u32* ckey, int* ccol,
                                           u32* n_cand, ZPart* zrow) {
    const int col0 = chunk * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS;
    const u32 cut = rp.cut_ok ? rp.cut_key : QRITA_EMPTY_KEY;  // no key is above EMPTY
    u32 key[QRITA_ITEMS];
    u32 mine = 0;
    // the keepable count and the max, over every key (a dead one never passes a live max); the
    // few rows that need how many equal the max, or the min, count them later (search_row)
#pragma unroll
    for (int i = 0; i < QRITA_ITEMS; ++i) {
        key[i] = Tr::key(b[i]);
        ps.n_keep += key[i] > Tr::KEY_NEG_INF ? 1u : 0u;
        ps.max_key = key[i] > ps.max_key ? key[i] : ps.max_key;
        mine += key[i] > cut ? 1u : 0u;
    }
    if (rp.cut_ok) {
        u32 total;
        u32 pos = *n_cand + block_exclusive_scan(mine, &total);
        if (mine) {
#pragma unroll
            for (int i = 0; i < QRITA_ITEMS; ++i) {
                if (key[i] > rp.cut_key) {
                    if (pos < QRITA_CAP) {
                        ckey[pos] = key[i];
                        ccol[pos] = col0 + i;
                    }
                    ++pos;
                }
            }
        }
        *n_cand += total;
    }
    if (need_z) {
        float mt = -__int_as_float(0x7f800000);
        for (int i = 0; i < QRITA_ITEMS; ++i)
            if (key[i] > Tr::KEY_NEG_INF) mt = fmaxf(mt, Tr::value(b[i]));
        const float mc = block_allreduce(mt, OpMax(), -__int_as_float(0x7f800000));
        double st = 0.0;
        if (mc == __int_as_float(0x7f800000)) {  // +inf entries share the mass
            for (int i = 0; i < QRITA_ITEMS; ++i) st += key[i] == Tr::KEY_POS_INF ? 1.0 : 0.0;
        } else if (mc > -__int_as_float(0x7f800000)) {
            float s = 0.0f;
            for (int i = 0; i < QRITA_ITEMS; ++i)
                if (key[i] > Tr::KEY_NEG_INF) s += expf(Tr::value(b[i]) - mc);
            st = (double)s;
        }
        const double sc = block_allreduce(st, OpSum(), 0.0);
        if (threadIdx.x == 0) {
            zrow[chunk].m = mc;
            zrow[chunk].s = sc;
        }
    }
}

// The pass over chunks [c0, c1) of a row.  The loads of the next chunk are issued before a
// chunk's block scan and reductions, so that their latency hides behind its barriers.
template <class Tr>
__device__ void pass_chunks(const typename Tr::bits_t* xrow, i64 stride_v, int V, int vec, int c0, int c1,
                            const RowParams& rp, bool need_z, PassState& ps, u32* ckey, int* ccol, u32* n_cand,
                            ZPart* zrow) {
    typename Tr::bits_t next[QRITA_ITEMS];
    if (c0 < c1) load_items<Tr>(xrow, stride_v, V, vec, c0 * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS, next);
    for (int c = c0; c < c1; ++c) {
        typename Tr::bits_t b[QRITA_ITEMS];
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) b[i] = next[i];
        if (c + 1 < c1) load_items<Tr>(xrow, stride_v, V, vec, (c + 1) * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS, next);
        pass_chunk<Tr>(b, c, rp, need_z, ps, ckey, ccol, n_cand, zrow);
    }
}

__device__ Partial pass_finish(const PassState& ps, u32 n_cand) {
    Partial t;
    t.max_key = block_allreduce(ps.max_key, OpMax(), 0u);
    t.n_keep = block_allreduce(ps.n_keep, OpSum(), 0u);
    t.n_cand = n_cand;
    return t;
}

// ---- what the search runs over: the candidates in shared memory, or the whole row ----------
struct CandSource {
    static constexpr bool ROW = false;
    static constexpr bool SLICE = false;
    const u32* keys;
    const int* cols;
    int n;
    __device__ __forceinline__ int size() const { return n; }
    __device__ __forceinline__ void get(int i, u32& key, int& col) const { key = keys[i]; col = cols[i]; }
};

template <class Tr>
struct RowSource {
    static constexpr bool ROW = true;
    static constexpr bool SLICE = false;
    const typename Tr::bits_t* x;
    i64 stride_v;
    int V;
    int vec;   // 16-byte loads (contiguous, aligned rows)
    int fast;  // for_each two chunks at a time (opt-in: see QRITA_FAST in kernels' flags)
    __device__ __forceinline__ int size() const { return V; }
    __device__ __forceinline__ void get(int i, u32& key, int& col) const {
        key = Tr::key(x[(i64)i * stride_v]);
        col = i;
    }
};

template <class Src, class F>
__device__ __forceinline__ void for_each(const Src& src, F f) {
    const int n = src.size();
    for (int i = threadIdx.x; i < n; i += QRITA_THREADS) {
        u32 key;
        int col;
        src.get(i, key, col);
        f(key);
    }
}

// Chunks [c0, c1) of the row a CHUNK at a time, two chunks in flight (16-byte loads when
// contiguous).  Entries past the end (of the row, or of the range) come as NaN bits (key 0),
// which no caller counts: every live key is > 0.
template <class Tr, class F>
__device__ __forceinline__ void for_each_chunks(const RowSource<Tr>& row, int c0, int c1, F f) {
    const int end = c1 * QRITA_CHUNK < row.V ? c1 * QRITA_CHUNK : row.V;
    if (!row.fast) {
        for (int i = c0 * QRITA_CHUNK + threadIdx.x; i < end; i += QRITA_THREADS)
            f(Tr::key(row.x[(i64)i * row.stride_v]));
        return;
    }
    for (int c = c0; c < c1; c += 2) {
        const int col0 = c * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS;
        typename Tr::bits_t b0[QRITA_ITEMS], b1[QRITA_ITEMS];
        load_items<Tr>(row.x, row.stride_v, end, row.vec, col0, b0);
        load_items<Tr>(row.x, row.stride_v, end, row.vec, col0 + QRITA_CHUNK, b1);
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) f(Tr::key(b0[i]));
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) f(Tr::key(b1[i]));
    }
}

template <class Tr, class F>
__device__ __forceinline__ void for_each(const RowSource<Tr>& row, F f) {
    for_each_chunks(row, 0, (row.V + QRITA_CHUNK - 1) / QRITA_CHUNK, f);
}

// A cluster block's part of a row search: chunks [c0, c1) of the row.  size() stays the row's
// length, so that the search's state (and so its choice of pivots) is that of the whole row.
template <class Tr>
struct SliceSource {
    static constexpr bool ROW = true;
    static constexpr bool SLICE = true;
    RowSource<Tr> row;
    int c0, c1;
    __device__ __forceinline__ int size() const { return row.V; }
};

template <class Tr, class F>
__device__ __forceinline__ void for_each(const SliceSource<Tr>& s, F f) {
    for_each_chunks(s.row, s.c0, s.c1, f);
}

// Top-p weights in 64-bit fixed point: q(w) = round(w * 2^F), w = exp(x - m) <= 1, with
// F chosen by the host so that V * 2^F <= 2^62.  Integer sums are exact in any order.
template <class Tr>
struct Weights {
    float m;
    int m_inf;     // the row max is +inf: the +inf entries share the mass
    double scale;  // 2^F
    __device__ __forceinline__ u64 q(u32 key) const {
        if (m_inf) return key == Tr::KEY_POS_INF ? (u64)scale : 0ull;
        float v = Tr::value(Tr::bits(key));
        return (u64)((double)expf(v - m) * scale + 0.5);
    }
};

struct SearchResult {
    u32 z;          // boundary key z*
    u64 above;      // C(z*): count or mass strictly above
    u32 n;          // entries equal to z*
    u32 above_cnt;  // how many entries are strictly above
    u64 target;     // the target used (clamped to C(lo0): see pivot_search)
    int ok;         // 1 found; 0 the invariant broke (a bug); 2 continue over sm.cand_* (internal)
    int clobbered;  // sm.cand_* was overwritten by a compaction
};

// The state of a search between rounds; ``base`` is the count/mass of the entries above
// every key the source holds (non-zero once a row search moved to shared memory).
struct SearchState {
    u64 lo, hi, base, target;
    u32 base_cnt, live;
    int round;
};

// #{j : tau_j < key} for a live key (> lo); keys above hi go to the top bucket.
__device__ __forceinline__ int bucket_of(u32 key, u64 lo, u64 hi, int P, const u32* tau) {
    if ((u64)key > hi) return P;
    const float est = (float)((u64)key - lo) * ((float)(P + 1) / (float)(hi - lo));
    int b = est >= (float)P ? P : (int)est;  // a guess; the two loops make it exact
    while (b < P && key > tau[b]) ++b;
    while (b > 0 && key <= tau[b - 1]) --b;
    return b;
}

// The statistics of a round's second pass: zmn, the smallest live key above the pivot t_lo, and
// how many entries equal it; zmx, the largest live key at or below t_hi (has_hi: a < P).
struct Pass2 {
    u32 zmn, n, zmx;
};

struct Pass2Lane {  // one thread's running part of Pass2
    u32 mn, n, mx;
    __device__ __forceinline__ void init() {
        mn = QRITA_EMPTY_KEY;
        n = 0u;
        mx = 0u;
    }
    __device__ __forceinline__ void add(u32 key, u64 lo, u32 t_lo, bool has_hi, u32 t_hi) {
        if ((u64)key <= lo) return;
        if (key > t_lo) {
            if (key < mn) {
                mn = key;
                n = 0u;
            }
            n += key == mn ? 1u : 0u;
        }
        if (has_hi && key <= t_hi && key > mx) mx = key;
    }
    __device__ Pass2 finish() const {
        Pass2 r;
        r.zmn = block_allreduce(mn, OpMin(), QRITA_EMPTY_KEY);
        r.n = block_allreduce(mn == r.zmn ? n : 0u, OpSum(), 0u);
        r.zmx = block_allreduce(mx, OpMax(), 0u);
        return r;
    }
};

// Bucket a of a round is (b_lo, b_hi]: b_lo = lo for a = 0, else pivot a; b_hi = pivot a + 1,
// or no bound for a = P (the top bucket also holds the keys above hi).
__device__ __forceinline__ bool in_bucket(u32 key, u64 lo, u32 b_lo, bool has_hi, u32 b_hi) {
    return (u64)key > lo && key > b_lo && (!has_hi || key <= b_hi);
}

// The second pass over chunks [c0, c1) of the row: Pass2 and, if compact, the live keys of
// bucket a gathered into sm.cand_* from position base in index order (block prefix sums per
// CHUNK); *n_compacted gets their count.
template <class Tr>
__device__ __noinline__ Pass2 row_pass2(const RowSource<Tr>& row, int c0, int c1, u32 base, u64 lo, u32 t_lo,
                                        bool has_hi, u32 t_hi, bool compact, u32 b_lo, u32* n_compacted) {
    const int end = c1 * QRITA_CHUNK < row.V ? c1 * QRITA_CHUNK : row.V;
    const u32 base0 = base;
    Pass2Lane pl;
    pl.init();
    for (int c = c0; c < c1; ++c) {
        const int col0 = c * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS;
        typename Tr::bits_t b[QRITA_ITEMS];
        load_items<Tr>(row.x, row.stride_v, end, row.vec, col0, b);
        u32 key[QRITA_ITEMS];
        u32 mine = 0;
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) {
            key[i] = Tr::key(b[i]);
            pl.add(key[i], lo, t_lo, has_hi, t_hi);
            const bool take = compact && in_bucket(key[i], lo, b_lo, has_hi, t_hi);
            key[i] = take ? key[i] : 0u;  // 0 (the NaN key) marks "not taken": live keys are > 0
            mine += take ? 1u : 0u;
        }
        if (compact) {
            u32 total;
            u32 pos = base + block_exclusive_scan(mine, &total);
#pragma unroll
            for (int i = 0; i < QRITA_ITEMS; ++i) {
                if (key[i] != 0u) {
                    qrita_sm.cand_key[pos] = key[i];
                    qrita_sm.cand_col[pos] = col0 + i;
                    ++pos;
                }
            }
            base += total;
        }
    }
    *n_compacted = base - base0;
    return pl.finish();
}

// The second pass of a round over the whole row (one block).
template <class Tr>
__device__ __forceinline__ Pass2 src_pass2(const RowSource<Tr>& row, int a, u64 lo, u32 t_lo, bool has_hi, u32 t_hi,
                                           bool compact, u32 b_lo, u32* n_compacted) {
    return row_pass2<Tr>(row, 0, (row.V + QRITA_CHUNK - 1) / QRITA_CHUNK, 0u, lo, t_lo, has_hi, t_hi, compact, b_lo,
                         n_compacted);
}


// The same statistics over the candidates in shared memory (nothing is gathered there).
__device__ __noinline__ Pass2 cand_pass2(const CandSource& src, u64 lo, u32 t_lo, bool has_hi, u32 t_hi) {
    Pass2Lane pl;
    pl.init();
    for_each(src, [&](u32 key) { pl.add(key, lo, t_lo, has_hi, t_hi); });
    return pl.finish();
}

// A bin's mass from its two words, and back.
#define QRITA_WORD_BITS (8 * (int)sizeof(u32))
__device__ __forceinline__ u64 words_u64(u32 lo_word, u32 hi_word) { return ((u64)hi_word << QRITA_WORD_BITS) | lo_word; }
__device__ __forceinline__ u64 bin_mass(int b) {
    return words_u64(qrita_sm.bin_mlo[b], qrita_sm.bin_mhi[b]);
}

// Adds a 64-bit mass to a bin kept as two u32 words: the low word's carry goes to the high word.
// Exact in any order: the words end as the sum's low 32 bits and the rest.
__device__ __forceinline__ void bin_mass_add(u32* mlo, u32* mhi, u64 q) {
    const u32 ql = (u32)q;
    u32 carry = 0u;
    if (ql) {
        const u32 old = atomicAdd(mlo, ql);
        carry = (u32)(old + ql) < old ? 1u : 0u;
    }
    const u32 qh = (u32)(q >> QRITA_WORD_BITS) + carry;
    if (qh) atomicAdd(mhi, qh);
}

// A round's first pass: each live key adds 1 and (MASS) its weight to its bin, one shared atomic
// a key.  Summing a thread's run of same-bin keys first was slower on the H200 (session 20 call
// B, b07e77a, same bits: Gaussian top-p 0.9 B=16 398 vs 373 us, Zipf B=1024 2570 vs 2465 us),
// and so were warp-aggregated atomics (f2f0869).  Integer sums: the bins end the same in any order.
template <class Tr, bool MASS, class Src>
__device__ __forceinline__ void hist_pass(const Src& src, u64 lo, u64 hi, int P, const Weights<Tr>& wt) {
    for_each(src, [&](u32 key) {
        if ((u64)key <= lo) return;
        const int b = bucket_of(key, lo, hi, P, qrita_sm.tau);
        atomicAdd(&qrita_sm.bin_cnt[b], 1u);
        if (MASS) bin_mass_add(&qrita_sm.bin_mlo[b], &qrita_sm.bin_mhi[b], wt.q(key));
    });
}


#if QRITA_CLUSTER > 1
// A round's bins summed over the cluster: every block ends with the row's totals, and
// sm.bin_pre[j] = bin j's count in the blocks of lower rank (where this block's part of a
// compacted bucket starts).  Each block reads every block's bins, in rank order.
template <bool MASS>
__device__ __noinline__ void cluster_sum_bins(int P) {
    const u32 me = cluster_rank();
    const int j = threadIdx.x;
    cluster_barrier();  // every block's bins are complete
    u32 cnt = 0u, pre = 0u;
    u64 mass = 0ull;
    if (j <= P) {
        for (u32 q = 0; q < QRITA_CLUSTER; ++q) {
            const u32 c = *cluster_peer(&qrita_sm.bin_cnt[j], q);
            pre += q < me ? c : 0u;
            cnt += c;
            if (MASS) mass += words_u64(*cluster_peer(&qrita_sm.bin_mlo[j], q), *cluster_peer(&qrita_sm.bin_mhi[j], q));
        }
    }
    cluster_barrier();  // every block has read every block's bins
    if (j <= P) {
        qrita_sm.bin_cnt[j] = cnt;
        qrita_sm.bin_mlo[j] = (u32)mass;
        qrita_sm.bin_mhi[j] = (u32)(mass >> QRITA_WORD_BITS);
        qrita_sm.bin_pre[j] = pre;
    }
    __syncthreads();
}

// The second pass of a round by a cluster block over its slice, merged over the cluster; when
// compact, bucket a (sm.bin_cnt[a] keys, the totals) ends in the leader's sm.cand_* in index
// order: each block puts its part at sm.bin_pre[a], and the leader copies the others' parts.
template <class Tr>
__device__ __noinline__ Pass2 src_pass2(const SliceSource<Tr>& s, int a, u64 lo, u32 t_lo, bool has_hi, u32 t_hi,
                                        bool compact, u32 b_lo, u32* n_compacted) {
    const u32 me = cluster_rank();
    u32 mine;
    const Pass2 own = row_pass2<Tr>(s.row, s.c0, s.c1, compact ? qrita_sm.bin_pre[a] : 0u, lo, t_lo, has_hi, t_hi,
                                    compact, b_lo, &mine);
    if (threadIdx.x == 0) {
        qrita_sm.pass2[0] = own.zmn;
        qrita_sm.pass2[1] = own.n;
        qrita_sm.pass2[2] = own.zmx;
    }
    cluster_barrier();  // every block's Pass2 and compacted part are written
    Pass2 r;
    r.zmn = QRITA_EMPTY_KEY;
    r.n = 0u;
    r.zmx = 0u;
    for (u32 q = 0; q < QRITA_CLUSTER; ++q) {
        const u32 zmn = *cluster_peer(&qrita_sm.pass2[0], q), zmx = *cluster_peer(&qrita_sm.pass2[2], q);
        r.zmn = zmn < r.zmn ? zmn : r.zmn;
        r.zmx = zmx > r.zmx ? zmx : r.zmx;
    }
    for (u32 q = 0; q < QRITA_CLUSTER; ++q)
        if (*cluster_peer(&qrita_sm.pass2[0], q) == r.zmn) r.n += *cluster_peer(&qrita_sm.pass2[1], q);
    const u32 total = qrita_sm.bin_cnt[a];
    if (compact && me == 0u) {  // the leader goes on over the bucket; the followers stop here
        for (u32 q = 1; q < QRITA_CLUSTER; ++q) {
            const u32 from = *cluster_peer(&qrita_sm.bin_pre[a], q);
            const u32 to = q + 1 < QRITA_CLUSTER ? *cluster_peer(&qrita_sm.bin_pre[a], q + 1) : total;
            const volatile u32* keys = cluster_peer(&qrita_sm.cand_key[0], q);
            const volatile int* cols = cluster_peer(&qrita_sm.cand_col[0], q);
            for (u32 i = from + threadIdx.x; i < to; i += QRITA_THREADS) {
                qrita_sm.cand_key[i] = keys[i];
                qrita_sm.cand_col[i] = cols[i];
            }
        }
    }
    cluster_barrier();  // nobody reads another block's shared memory any more this round
    *n_compacted = compact ? total : mine;
    return r;
}
#endif

// The state machine of qrita.core.search on the live keys (lo, hi] of src.  MASS: weights
// are Weights::q (top-p), else 1 (top-k).  One round: one pass buckets the keys by P pivots
// (count and mass per bucket: 32-bit integer atomics), warp 0
// finds the largest pivot a with C(tau_a) >= T (visiting the pivots in increasing order ends
// there: see the numpy backend), and a second pass finds zmn (the smallest key above pivot a),
// how many entries equal it, and zmx (the largest key at or below pivot a + 1, for snap_hi).
// On the row, that second pass also gathers bucket a (the next live range) into shared memory
// when it fits; the search then returns ok = 2 and goes on over shared memory (search() below).
template <class Tr, bool MASS, class Src>
__device__ __noinline__ SearchResult pivot_search(const Src& src, SearchState& st, const Weights<Tr>& wt) {
    const int lane = threadIdx.x % QRITA_WARP_SIZE, warp = threadIdx.x / QRITA_WARP_SIZE;
    SearchResult res;
    res.ok = 0;
    res.clobbered = 0;
    for (; (st.round) < (Tr::MAX_ROUNDS); ++st.round) {
        u64 lo = st.lo, hi = st.hi;
        const int forced = (hi - lo <= 1) ? 1 : 0;
        const int P = forced ? 1 : (st.live > QRITA_SMALL_LIVE ? QRITA_WIDE_PIVOTS : QRITA_NUM_PIVOTS);
        for (int j = threadIdx.x; j < QRITA_NBINS; j += QRITA_THREADS) {
            if (j < P) qrita_sm.tau[j] = (u32)(forced ? hi - 1 : qrita_pivot<u64>(lo, hi, (u64)(j + 1), (u64)P));
            qrita_sm.bin_cnt[j] = 0u;
            qrita_sm.bin_mlo[j] = 0u;
            qrita_sm.bin_mhi[j] = 0u;
        }
        __syncthreads();
        hist_pass<Tr, MASS>(src, lo, hi, P, wt);
        __syncthreads();
#if QRITA_CLUSTER > 1
        if constexpr (Src::SLICE) cluster_sum_bins<MASS>(P);
#endif
        const u32* bin_cnt = qrita_sm.bin_cnt;
        if (warp == 0) {
            // lane owns bins [b0, b0 + BINS_PER_LANE); C_j = base + sum of bins >= j
            const int b0 = lane * QRITA_BINS_PER_LANE;
            u64 own = 0;
            for (int i = 0; i < QRITA_BINS_PER_LANE; ++i) {
                const int b = b0 + i;
                if (b <= P) own += MASS ? bin_mass(b) : (u64)bin_cnt[b];
            }
            u64 suffix = own;  // sum over lanes >= this one
            for (int o = 1; o < QRITA_WARP_SIZE; o <<= 1) {
                u64 t = QRITA_SHFL_DOWN(suffix, o);
                if (lane + o < QRITA_WARP_SIZE) suffix += t;
            }
            const u64 above_lane = suffix - own + st.base;
            u64 target = st.target;
            if (st.round == 0) {  // C(lo0) < T only through float rounding (p ~ 1): keep all
                const u64 c_lo = warp_allreduce(own, OpSum()) + st.base;
                if (c_lo < target) target = c_lo;
            }
            int found = 0;
            u64 run = above_lane;
            for (int i = QRITA_BINS_PER_LANE - 1; i >= 0; --i) {
                const int b = b0 + i;
                if (b > P) continue;
                run += MASS ? bin_mass(b) : (u64)bin_cnt[b];
                if (b >= 1 && run >= target && found == 0) found = b;
            }
            const int a = warp_allreduce(found, OpMax());
            const int a_eff = forced ? 1 : (a > 0 ? a : 1);
            u64 c = above_lane;
            u64 up = 0;      // mass of the bins above a
            u32 up_cnt = 0;  // and their count
            u32 cnt_from = 0;
            for (int i = QRITA_BINS_PER_LANE - 1; i >= 0; --i) {
                const int b = b0 + i;
                if (b > P) continue;
                const u64 m = MASS ? bin_mass(b) : (u64)bin_cnt[b];
                if (b >= a_eff) {
                    c += m;
                    cnt_from += bin_cnt[b];
                }
                if (b > a) {
                    up += m;
                    up_cnt += bin_cnt[b];
                }
            }
            const u32 cc = warp_allreduce(cnt_from, OpSum()) + st.base_cnt;
            up = warp_allreduce(up, OpSum());
            up_cnt = warp_allreduce(up_cnt, OpSum());
            const int owner = a_eff / QRITA_BINS_PER_LANE;
            if (lane == owner) qrita_sm.bcast[1] = c;
            if (lane == 0) {
                qrita_sm.bcast[0] = (u64)a;
                qrita_sm.bcast[2] = (u64)cc;
                qrita_sm.bcast[5] = up;
                qrita_sm.bcast[6] = (u64)up_cnt;
                qrita_sm.bcast[7] = target;
            }
        }
        __syncthreads();
        const int a = (int)qrita_sm.bcast[0];
        const u64 c = qrita_sm.bcast[1];
        const u32 cc = (u32)qrita_sm.bcast[2];
        const u64 up = qrita_sm.bcast[5];
        const u32 up_cnt = (u32)qrita_sm.bcast[6];
        st.target = qrita_sm.bcast[7];
        const u32 in_a = bin_cnt[a];
        const int a_eff = forced ? 1 : (a > 0 ? a : 1);
        const u32 t_lo = qrita_sm.tau[a_eff - 1];         // pivot a_eff
        const bool has_hi = a < P;
        const u32 t_hi = has_hi ? qrita_sm.tau[a] : 0u;   // pivot a + 1
        const u32 b_lo = a > 0 ? qrita_sm.tau[a - 1] : 0u;  // bucket a is (b_lo, t_hi] above lo
        __syncthreads();
        bool compact = false;
        u32 n_compacted = 0;
        if constexpr (Src::ROW) compact = in_a <= (u32)QRITA_CAP && !forced;
        if (compact) res.clobbered = 1;
        if (a == 0 && !forced) {  // BELOW at the first pivot
            const int state = qrita_classify_pivot<int>(c, (u64)0, st.target, 0);
            hi = qrita_narrow_hi<u64>(hi, state, (u64)qrita_sm.tau[0]);
            if constexpr (Src::ROW) {
                // the snap only saves rounds: on the row it rides on the compaction's pass
                if (compact) {
                    const Pass2 s2 = src_pass2<Tr>(src, 0, lo, t_lo, true, t_hi, true, b_lo, &n_compacted);
                    hi = qrita_snap_hi<u64>(hi, lo, (u64)s2.zmx);
                }
            } else {
                const Pass2 s2 = cand_pass2(src, lo, t_lo, true, t_hi);
                hi = qrita_snap_hi<u64>(hi, lo, (u64)s2.zmx);
            }
        } else {
            Pass2 s2;
            if constexpr (Src::ROW) {
                s2 = src_pass2<Tr>(src, a, lo, t_lo, has_hi, t_hi, compact, b_lo, &n_compacted);
            } else {
                s2 = cand_pass2(src, lo, t_lo, has_hi, t_hi);
            }
            const u32 zmn = s2.zmn, n = s2.n;
            const u64 w = MASS ? (u64)n * wt.q(zmn) : (u64)n;
            const int state = qrita_classify_pivot<int>(c, w, st.target, forced);
            if (state == QRITA_STOP) {
                res.z = zmn;
                res.above = c - w;
                res.n = n;
                res.above_cnt = cc - n;
                res.target = st.target;
                res.ok = 1;
                return res;
            }
            lo = qrita_narrow_lo<u64>(lo, state, (u64)zmn);
            if (has_hi) {  // the next pivot is BELOW
                hi = qrita_narrow_hi<u64>(hi, QRITA_BELOW, (u64)t_hi);
                hi = qrita_snap_hi<u64>(hi, lo, (u64)s2.zmx);
            }
        }
        if (lo >= hi) lo = hi - 1;
        st.lo = lo;
        st.hi = hi;
        st.live = in_a;
        __syncthreads();
        if (compact) {  // bucket a is in shared memory; what lies above it becomes the base
            st.base += up;
            st.base_cnt += up_cnt;
            st.live = n_compacted;
            ++st.round;
            res.ok = 2;
            return res;
        }
    }
    return res;  // not reached while the invariant holds (res.ok == 0 reports it)
}

// The search from (lo, hi] with target T over src (the row moves to shared memory when it can).
template <class Tr, bool MASS, class Src>
__device__ SearchResult search(const Src& src, u64 lo, u64 hi, u64 target, const Weights<Tr>& wt) {
    SearchState st{lo, hi, 0ull, target, 0u, (u32)src.size(), 0};
    SearchResult r = pivot_search<Tr, MASS>(src, st, wt);
    if (r.ok == 2) {
        CandSource gathered{qrita_sm.cand_key, qrita_sm.cand_col, (int)st.live};
        r = pivot_search<Tr, MASS>(gathered, st, wt);
        r.clobbered = 1;
    }
    return r;
}

// How many keys of src equal z.
template <class Src>
__device__ __noinline__ u32 count_equal(const Src& src, u32 z) {
    u32 mine = 0;
    for_each(src, [&](u32 key) { mine += key == z ? 1u : 0u; });
    return block_allreduce(mine, OpSum(), 0u);
}

// The smallest live key of the row (*z; EMPTY if none) and how many equal it (*n).
template <class Tr>
__device__ __noinline__ void row_min(const RowSource<Tr>& row, u32* z, u32* n) {
    u32 mn = QRITA_EMPTY_KEY, cnt = 0u;
    for_each(row, [&](u32 key) {
        if (key <= Tr::KEY_NEG_INF) return;
        if (key < mn) {
            mn = key;
            cnt = 0u;
        }
        cnt += key == mn ? 1u : 0u;
    });
    *z = block_allreduce(mn, OpMin(), QRITA_EMPTY_KEY);
    *n = block_allreduce(mn == *z ? cnt : 0u, OpSum(), 0u);
}

// Sum of the top-p weights of the keys above z (the top-k survivors above the boundary).
template <class Tr, class Src>
__device__ __noinline__ u64 mass_above(const Src& src, u32 z, const Weights<Tr>& wt) {
    u64 mine = 0;
    for_each(src, [&](u32 key) { if (key > z) mine += wt.q(key); });
    return block_allreduce(mine, OpSum(), 0ull);
}

// The column of the nt-th entry equal to z in index order, over the candidates.
__device__ __noinline__ int last_tie_col_cand(const CandSource& src, u32 z, u32 nt) {
    const int n = src.size();
    u32 seen = 0;
    if (threadIdx.x == 0) qrita_sm.bcast[8] = (u64)(i64)-1;
    __syncthreads();
    for (int base = 0; base < n && seen < nt; base += QRITA_THREADS) {
        const int i = base + threadIdx.x;
        u32 key = 0u;
        int col = -1;
        if (i < n) src.get(i, key, col);
        const u32 flag = (i < n && key == z) ? 1u : 0u;
        u32 total;
        const u32 before = block_exclusive_scan(flag, &total);
        if (flag && seen + before + 1u == nt) qrita_sm.bcast[8] = (u64)(i64)col;
        seen += total;
    }
    __syncthreads();
    const int col = (int)(i64)qrita_sm.bcast[8];
    __syncthreads();
    return col;
}

// The same over the row, QRITA_TIE_SPAN chunks at a time: each thread counts TIE_SPAN * ITEMS
// consecutive entries (TIE_SPAN loads in flight), one scan a span; the thread holding the nt-th
// reads its entries again to find it.  (A scan a chunk paid a memory latency and a block scan a
// chunk: bf16 rows whose tie group straddles the threshold read most of the row that way.)
#define QRITA_TIE_SPAN 8
template <class Tr>
__device__ __noinline__ int last_tie_col_row(const RowSource<Tr>& row, u32 z, u32 nt) {
    constexpr int PER_THREAD = QRITA_TIE_SPAN * QRITA_ITEMS;
    u32 seen = 0;
    if (threadIdx.x == 0) qrita_sm.bcast[8] = (u64)(i64)-1;
    __syncthreads();
    for (i64 span = 0; span < (i64)row.V && seen < nt; span += (i64)PER_THREAD * QRITA_THREADS) {
        const i64 first = span + (i64)threadIdx.x * PER_THREAD;  // this thread's entries
        u32 mine = 0;
#pragma unroll
        for (int g = 0; g < QRITA_TIE_SPAN; ++g) {
            const i64 col0 = first + g * QRITA_ITEMS;
            if (col0 >= (i64)row.V) break;
            typename Tr::bits_t b[QRITA_ITEMS];
            load_items<Tr>(row.x, row.stride_v, row.V, row.vec, (int)col0, b);
#pragma unroll
            for (int i = 0; i < QRITA_ITEMS; ++i) mine += Tr::key(b[i]) == z ? 1u : 0u;
        }
        u32 total;
        u32 at = seen + block_exclusive_scan(mine, &total);
        if (mine && at < nt && nt <= at + mine) {
            for (int g = 0; g < QRITA_TIE_SPAN; ++g) {
                const i64 col0 = first + g * QRITA_ITEMS;
                if (col0 >= (i64)row.V) break;
                typename Tr::bits_t b[QRITA_ITEMS];
                load_items<Tr>(row.x, row.stride_v, row.V, row.vec, (int)col0, b);
                for (int i = 0; i < QRITA_ITEMS; ++i) {
                    if (Tr::key(b[i]) == z && ++at == nt) qrita_sm.bcast[8] = (u64)(col0 + i);
                }
            }
        }
        seen += total;
    }
    __syncthreads();
    const int col = (int)(i64)qrita_sm.bcast[8];
    __syncthreads();
    return col;
}

struct RowOut {
    u32 thr_key;
    u32 num_ties;
    i64 count;
    int hit;
    int tie_last;
    int ok;
};

// A top-k row whose cut held fewer than k candidates reads the row once more and gathers the
// keys above its second cut into sm.cand_* (every thread calls it; the decision is uniform).
// One read instead of the search's rounds over the whole row: in an LLM-like batch a row that
// missed so set the kernel's tail (H200, B=1024, k100+p0.9: one such row 902 against 328 us).
// Returns the parameters the search then uses; t's counts stay, its n_cand is the new one's.
template <class Tr>
__device__ __noinline__ RowParams regather(const typename Tr::bits_t* xrow, i64 stride_v, int V, int vec, const RowParams& rp,
                              Partial& t) {
    if (!rp.cut2_ok || rp.p_mode == 1 || (i64)t.n_cand >= rp.k) return rp;
    RowParams r2 = rp;
    r2.cut_key = rp.cut2_key;
    r2.cut2_ok = 0;
    PassState ps;
    pass_state_init(ps);
    u32 n = 0;
    __syncthreads();  // the buffer's previous contents are no longer read
    pass_chunks<Tr>(xrow, stride_v, V, vec, 0, (V + QRITA_CHUNK - 1) / QRITA_CHUNK, r2, false, ps, qrita_sm.cand_key,
                    qrita_sm.cand_col, &n, nullptr);
    t.n_cand = n;
    __syncthreads();
    return r2;
}

#if QRITA_CLUSTER > 1
#define QRITA_POST_DONE 0ull
#define QRITA_POST_COUNT 1ull
#define QRITA_POST_MASS 2ull

// Block `rank`'s slice of the row: chunks split evenly over the cluster, in rank order.
template <class Tr>
__device__ __forceinline__ SliceSource<Tr> slice_of(const RowSource<Tr>& row, u32 rank) {
    const int nchunks = (row.V + QRITA_CHUNK - 1) / QRITA_CHUNK;
    return SliceSource<Tr>{row, (int)(nchunks * rank / QRITA_CLUSTER), (int)(nchunks * (rank + 1) / QRITA_CLUSTER)};
}

// A follower: run each search the leader posts over this block's slice, until the leader posts
// DONE; returns the row's (thr_key, tie_last) from that post.  The pivot search stops where
// the leader's goes on alone (a bucket gathered into its shared memory: ok == 2) or ends.
template <class Tr>
__device__ __noinline__ void follow(const RowSource<Tr>& row, double scale, u32* thr_key, int* tie_last) {
    const SliceSource<Tr> s = slice_of<Tr>(row, cluster_rank());
    for (;;) {
        cluster_barrier();  // the leader's post is out
        const volatile u64* post = cluster_peer(&qrita_sm.post[0], 0u);
        const u64 op = post[0], lo = post[1], hi = post[2], target = post[3];
        if (op == QRITA_POST_DONE) {
            *thr_key = (u32)lo;
            *tie_last = (int)(i64)hi;
            cluster_barrier();  // the leader may leave once every follower has read it
            return;
        }
        Weights<Tr> wt;
        wt.m = *cluster_peer(&qrita_sm.post_m, 0u);
        wt.m_inf = *cluster_peer(&qrita_sm.post_m_inf, 0u);
        wt.scale = scale;
        // the leader posts again only after this search's cluster barriers: the post is read
        SearchState st{lo, hi, 0ull, target, 0u, (u32)s.size(), 0};
        if (op == QRITA_POST_MASS) {
            pivot_search<Tr, true>(s, st, wt);
        } else {
            pivot_search<Tr, false>(s, st, wt);
        }
    }
}

// The leader, its row done: DONE with what masking needs, read by every follower.
__device__ __forceinline__ void lead_done(u32 thr_key, int tie_last) {
    if (threadIdx.x == 0) {
        qrita_sm.post[0] = QRITA_POST_DONE;
        qrita_sm.post[1] = thr_key;
        qrita_sm.post[2] = (u64)(i64)tie_last;
    }
    cluster_barrier();  // the post is out
    cluster_barrier();  // and read
}

#endif

// The search over the whole row: by this block, or (CL, the leader) by its cluster, a slice a
// block.
template <class Tr, bool MASS, bool CL>
__device__ __forceinline__ SearchResult row_search(const RowSource<Tr>& row, u64 lo, u64 hi, u64 target,
                                                   const Weights<Tr>& wt) {
#if QRITA_CLUSTER > 1
    if constexpr (CL) {  // the leader: post the search, then search its slice beside the followers
        if (threadIdx.x == 0) {
            qrita_sm.post[0] = MASS ? QRITA_POST_MASS : QRITA_POST_COUNT;
            qrita_sm.post[1] = lo;
            qrita_sm.post[2] = hi;
            qrita_sm.post[3] = target;
            qrita_sm.post_m = wt.m;
            qrita_sm.post_m_inf = wt.m_inf;
        }
        cluster_barrier();  // the post is out
        return search<Tr, MASS>(slice_of<Tr>(row, 0u), lo, hi, target, wt);
    }
#endif
    return search<Tr, MASS>(row, lo, hi, target, wt);
}

// The selection of one row from its setup and pass totals (candidates in sm.cand_*).  CL: the
// blocks of a cluster call it together, on the same row and totals (row_search).
template <class Tr, bool CL = false>
__device__ __noinline__ RowOut search_row(const typename Tr::bits_t* xrow, i64 stride_v, int V, int vec, int fast,
                                          const RowParams& rp, const Partial& t, const ZPart* zrow, int nchunks,
                                          int ties_all, double scale, int want_tie) {
    RowOut out;
    out.hit = 0;
    out.ok = 1;
    out.tie_last = -1;
    if (t.n_keep == 0) {  // nothing keepable: threshold -inf, nothing kept
        out.thr_key = QRITA_EMPTY_KEY;
        out.num_ties = 0;
        out.count = 0;
        return out;
    }
    const u32 hi0 = t.max_key;
    bool cand_fit = rp.cut_ok && t.n_cand <= (u32)QRITA_CAP;
    CandSource cand{qrita_sm.cand_key, qrita_sm.cand_col, cand_fit ? (int)t.n_cand : 0};
    RowSource<Tr> row{xrow, stride_v, V, vec, fast};
    const u64 lo_row = (u64)Tr::KEY_NEG_INF;
    const u64 lo_cut = (u64)rp.cut_key;
    Weights<Tr> wt;
    wt.m = Tr::value(Tr::bits(hi0));
    wt.m_inf = hi0 == Tr::KEY_POS_INF ? 1 : 0;
    wt.scale = scale;
    // how many entries equal the max, where it matters: p <= 0 (the top-1 group) and a top-p
    // row whose max is +inf (those entries share the mass); the max is a candidate if any is
    u32 n_max = 0u;
    if (rp.p_mode == 1 || (wt.m_inf && rp.p_mode == 2 && !rp.k_active))
        n_max = cand_fit && t.n_cand > 0 ? count_equal(cand, hi0) : count_equal(row, hi0);

    u32 z, nt, n_eq;
    i64 count;
    if (rp.p_mode == 1) {  // p <= 0: the best token (its whole tie group under "all")
        z = hi0;
        n_eq = n_max;
        nt = ties_all ? n_eq : 1u;
        count = nt;
    } else {
        // top-k stage
        u32 zk, nk, ntk;
        i64 above_k;
        bool k_hit = false;
        if (rp.k_active) {
            k_hit = cand_fit && (i64)t.n_cand >= rp.k;
            const i64 K = k_hit ? rp.k : (rp.k < (i64)t.n_keep ? rp.k : (i64)t.n_keep);
            SearchResult r = k_hit ? search<Tr, false>(cand, lo_cut, (u64)hi0, (u64)K, wt)
                                   : row_search<Tr, false, CL>(row, lo_row, (u64)hi0, (u64)K, wt);
            out.ok &= r.ok;
            if (r.clobbered) cand_fit = false;
            zk = r.z;
            nk = r.n;
            above_k = (i64)r.above_cnt;
            ntk = qrita_topk_num_ties<u32>(K, above_k, (i64)nk, ties_all);
            out.hit = k_hit ? 1 : 0;
        } else {  // every keepable entry survives
            if (rp.p_mode == 0) {  // ... and nothing else to do: the boundary is the row's min
                row_min<Tr>(row, &zk, &nk);
            } else {  // top-p alone (below) uses none of these
                zk = 0u;
                nk = 0u;
            }
            above_k = (i64)t.n_keep - (i64)nk;
            ntk = nk;
        }
        if (rp.p_mode == 0) {
            z = zk;
            n_eq = nk;
            nt = ntk;
            count = above_k + ntk;
        } else if (rp.k_active) {  // top-p over the top-k survivors
            const u64 above = k_hit ? mass_above<Tr>(cand, zk, wt) : mass_above<Tr>(row, zk, wt);
            const u64 wz = wt.q(zk);
            const double zsum = (double)(above + (u64)ntk * wz);
            u64 target = (u64)(rp.p * zsum + 0.5);
            if (target < 1ull) target = 1ull;
            if (above < target) {  // the boundary is the top-k boundary group itself
                z = zk;
                n_eq = nk;
                nt = qrita_topp_num_ties<u32>(target, above, wz, (i64)ntk, ties_all);
                count = above_k + nt;
            } else {
                SearchResult r = k_hit ? search<Tr, true>(cand, (u64)zk, (u64)hi0, target, wt)
                                       : row_search<Tr, true, CL>(row, (u64)zk, (u64)hi0, target, wt);
                out.ok &= r.ok;
                if (r.clobbered) cand_fit = false;
                z = r.z;
                n_eq = r.n;
                nt = qrita_topp_num_ties<u32>(r.target, r.above, wt.q(r.z), (i64)r.n, ties_all);
                count = (i64)r.above_cnt + nt;
            }
        } else {  // top-p alone: renormalised over the whole row
            double zsum;
            if (wt.m_inf) {
                zsum = (double)n_max * scale;
            } else {
                double acc = 0.0;  // chunk partials in chunk order: the same for any grid
                for (int c = 0; c < nchunks; ++c) {
                    const ZPart zp = zrow[c];
                    if (zp.m > -__int_as_float(0x7f800000)) acc += zp.s * exp((double)zp.m - (double)wt.m);
                }
                zsum = acc * scale;
            }
            u64 target = (u64)(rp.p * zsum + 0.5);
            if (target < 1ull) target = 1ull;
            bool p_hit = false;
            if (cand_fit && t.n_cand > 0) p_hit = mass_above<Tr>(cand, rp.cut_key, wt) >= target;
            SearchResult r = p_hit ? search<Tr, true>(cand, lo_cut, (u64)hi0, target, wt)
                                   : row_search<Tr, true, CL>(row, lo_row, (u64)hi0, target, wt);
            out.ok &= r.ok;
            if (r.clobbered) cand_fit = false;
            z = r.z;
            n_eq = r.n;
            nt = qrita_topp_num_ties<u32>(r.target, r.above, wt.q(r.z), (i64)r.n, ties_all);
            count = (i64)r.above_cnt + nt;
            out.hit = p_hit ? 1 : 0;
        }
    }
    out.thr_key = z;
    out.num_ties = nt;
    out.count = count;
    if (want_tie) {
        if (nt >= n_eq) {
            out.tie_last = QRITA_ALL_TIES;
        } else if (cand_fit && z > rp.cut_key) {  // every entry equal to z is a candidate
            out.tie_last = last_tie_col_cand(cand, z, nt);
        } else {
            out.tie_last = last_tie_col_row<Tr>(row, z, nt);
        }
    }
    return out;
}

template <class Tr>
__device__ void write_row(const RowOut& o, int row, typename Tr::bits_t* threshold, int* num_ties, int* count,
                          unsigned char* hit) {
    if (threadIdx.x != 0) return;
    threshold[row] = o.thr_key == QRITA_EMPTY_KEY ? Tr::bits(Tr::KEY_NEG_INF) : Tr::bits(o.thr_key);
    num_ties[row] = (int)o.num_ties;
    count[row] = o.ok ? (int)o.count : -1;  // -1: the search broke its invariant (a bug)
    hit[row] = (unsigned char)o.hit;
}

template <class Tr>
__device__ __forceinline__ typename Tr::bits_t masked(typename Tr::bits_t b, int c, u32 thr_key, int tie_last,
                                                      typename Tr::bits_t mask_bits) {
    const u32 key = Tr::key(b);
    return (key > thr_key || (key == thr_key && c <= tie_last)) ? b : mask_bits;
}

// ITEMS masked entries from col0 to orow (16-byte stores; kept entries keep their bits).
template <class Tr>
__device__ __forceinline__ void store_masked(typename Tr::bits_t* orow, int c_end, int col0,
                                             const typename Tr::bits_t (&b)[QRITA_ITEMS], u32 thr_key, int tie_last,
                                             typename Tr::bits_t mask_bits) {
    if (col0 >= c_end) return;
    typename Tr::bits_t o[QRITA_ITEMS];
#pragma unroll
    for (int i = 0; i < QRITA_ITEMS; ++i) o[i] = masked<Tr>(b[i], col0 + i, thr_key, tie_last, mask_bits);
    if (col0 + QRITA_ITEMS <= c_end) {
        uint4* p = reinterpret_cast<uint4*>(orow + col0);
#pragma unroll
        for (int g = 0; g < QRITA_ITEMS / QRITA_PER_VEC(Tr); ++g) {
            u32 w[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if constexpr (sizeof(typename Tr::bits_t) == 2) {
                    w[i] = (u32)o[8 * g + 2 * i] | ((u32)o[8 * g + 2 * i + 1] << 16);
                } else {
                    w[i] = o[4 * g + i];
                }
            }
            p[g] = make_uint4(w[0], w[1], w[2], w[3]);
        }
    } else {
        for (int i = 0; i < QRITA_ITEMS && col0 + i < c_end; ++i) orow[col0 + i] = o[i];
    }
}

// Entries of cols [c_begin, c_end) that are not kept become mask_bits.  vec_both: input and
// output rows are contiguous and 16-byte aligned, and c_begin is a multiple of CHUNK.
template <class Tr>
__device__ void mask_cols(const typename Tr::bits_t* xrow, i64 sxv, typename Tr::bits_t* orow, i64 sov, int c_begin,
                          int c_end, u32 thr_key, int tie_last, typename Tr::bits_t mask_bits, int inplace,
                          int vec_both) {
    if (vec_both) {  // two chunks in flight; in place, kept entries are rewritten with their own bits
        for (int col0 = c_begin + threadIdx.x * QRITA_ITEMS; col0 < c_end; col0 += 2 * QRITA_CHUNK) {
            typename Tr::bits_t b0[QRITA_ITEMS], b1[QRITA_ITEMS];
            load_items<Tr>(xrow, 1, c_end, 1, col0, b0);
            load_items<Tr>(xrow, 1, c_end, 1, col0 + QRITA_CHUNK, b1);
            store_masked<Tr>(orow, c_end, col0, b0, thr_key, tie_last, mask_bits);
            store_masked<Tr>(orow, c_end, col0 + QRITA_CHUNK, b1, thr_key, tie_last, mask_bits);
        }
        return;
    }
    for (int c = c_begin + threadIdx.x; c < c_end; c += QRITA_THREADS) {
        const typename Tr::bits_t b = xrow[(i64)c * sxv];
        const u32 key = Tr::key(b);
        const bool keep = key > thr_key || (key == thr_key && c <= tie_last);
        if (!keep) {
            orow[(i64)c * sov] = mask_bits;
        } else if (!inplace) {
            orow[(i64)c * sov] = b;
        }
    }
}

// ---- kernels ----------------------------------------------------------------------------------
// One block per row: setup, pass, search, and (do_mask) the masking.
template <class Tr>
__device__ void select_rows(const typename Tr::bits_t* x, i64 sxb, i64 sxv, int V, int vec, RowArgs a, int ties_all,
                            double scale, typename Tr::bits_t* threshold, int* num_ties, int* count,
                            unsigned char* hit, ZPart* zpart, int do_mask, typename Tr::bits_t* out, i64 sob,
                            i64 sov, u32 mask_bits, int inplace) {
    const int row = blockIdx.x;
    const int nchunks = (V + QRITA_CHUNK - 1) / QRITA_CHUNK;
    const typename Tr::bits_t* xrow = x + (i64)row * sxb;
    RowParams rp = row_setup<Tr>(xrow, sxv, V, row, a);
    const bool need_z = rp.p_mode == 2 && !rp.k_active;
    const int fast = (vec & QRITA_FAST) ? 1 : 0;
    const int vec_out = (vec & QRITA_VEC_IN) && (vec & QRITA_VEC_OUT) && fast;
    vec &= QRITA_VEC_IN;
    ZPart* zrow = zpart + (i64)row * nchunks;
    PassState ps;
    pass_state_init(ps);
    u32 n_cand = 0;
    pass_chunks<Tr>(xrow, sxv, V, vec, 0, nchunks, rp, need_z, ps, qrita_sm.cand_key, qrita_sm.cand_col, &n_cand, zrow);
    Partial t = pass_finish(ps, n_cand);
    __threadfence_block();  // the zpart writes of thread 0 are read by every thread below
    __syncthreads();
    rp = regather<Tr>(xrow, sxv, V, vec, rp, t);
    const RowOut o = search_row<Tr>(xrow, sxv, V, vec, fast, rp, t, zrow, nchunks, ties_all, scale, do_mask);
    write_row<Tr>(o, row, threshold, num_ties, count, hit);
    if (do_mask)
        mask_cols<Tr>(xrow, sxv, out + (i64)row * sob, sov, 0, V, o.thr_key, o.tie_last,
                      (typename Tr::bits_t)mask_bits, inplace, vec_out);
}

// Split path, phase 1: block (row, s) runs the pass over slice s of the row's chunks.
template <class Tr>
__device__ void partial_rows(const typename Tr::bits_t* x, i64 sxb, i64 sxv, int V, int vec, RowArgs a, int S,
                             u32* cand_key, int* cand_col, Partial* parts, ZPart* zpart, RowCut* cuts) {
    const int row = blockIdx.x, s = blockIdx.y;
    const int nchunks = (V + QRITA_CHUNK - 1) / QRITA_CHUNK;
    const typename Tr::bits_t* xrow = x + (i64)row * sxb;
    const RowParams rp = row_setup<Tr>(xrow, sxv, V, row, a);
    if (s == 0 && threadIdx.x == 0) cuts[row] = RowCut{rp.cut_key, rp.cut2_key, rp.cut_ok, rp.cut2_ok};
    const bool need_z = rp.p_mode == 2 && !rp.k_active;
    const i64 region = (i64)row * S + s;
    vec &= QRITA_VEC_IN;
    PassState ps;
    pass_state_init(ps);
    u32 n_cand = 0;
    const int c0 = (int)((i64)nchunks * s / S), c1 = (int)((i64)nchunks * (s + 1) / S);
    pass_chunks<Tr>(xrow, sxv, V, vec, c0, c1, rp, need_z, ps, cand_key + region * QRITA_CAP,
                    cand_col + region * QRITA_CAP, &n_cand, zpart + (i64)row * nchunks);
    const Partial t = pass_finish(ps, n_cand);
    if (threadIdx.x == 0) parts[region] = t;
}

#if QRITA_CLUSTER > 1
// The cluster block's masking: the columns of its slice (slice_of).
template <class Tr>
__device__ __forceinline__ void mask_slice(const typename Tr::bits_t* xrow, i64 sxv, int V, int vec, int fast,
                                           typename Tr::bits_t* orow, i64 sov, u32 thr_key, int tie_last,
                                           u32 mask_bits, int inplace, int vec_out) {
    const SliceSource<Tr> s = slice_of<Tr>(RowSource<Tr>{xrow, sxv, V, vec, fast}, cluster_rank());
    const int c1 = s.c1 * QRITA_CHUNK < V ? s.c1 * QRITA_CHUNK : V;
    mask_cols<Tr>(xrow, sxv, orow, sov, s.c0 * QRITA_CHUNK, c1, thr_key, tie_last, (typename Tr::bits_t)mask_bits,
                  inplace, vec_out);
}
#endif

// Split path, phase 2: one block per row combines the S slices in order and searches.  CL (the
// cluster combine): block 0 of the cluster does so, the others follow its searches of the whole
// row (row_search, follow), and with do_mask every block masks its slice (no mask_kernel).
template <class Tr, bool CL>
__device__ void combine_rows(const typename Tr::bits_t* x, i64 sxb, i64 sxv, int V, int vec, RowArgs a, int S,
                             int ties_all,
                             double scale, const u32* cand_key, const int* cand_col, const Partial* parts,
                             const ZPart* zpart, const RowCut* cuts, typename Tr::bits_t* threshold, int* num_ties, int* count,
                             unsigned char* hit, RowInfo* info, int want_tie, int do_mask, typename Tr::bits_t* out,
                             i64 sob, i64 sov, u32 mask_bits, int inplace) {
    const int row = CL ? (int)(blockIdx.x / QRITA_CLUSTER) : (int)blockIdx.x;
    const int nchunks = (V + QRITA_CHUNK - 1) / QRITA_CHUNK;
    const typename Tr::bits_t* xrow = x + (i64)row * sxb;
    const int fast = (vec & QRITA_FAST) ? 1 : 0;
    const int vec_out = (vec & QRITA_VEC_IN) && (vec & QRITA_VEC_OUT) && fast;
    vec &= QRITA_VEC_IN;
#if QRITA_CLUSTER > 1
    if constexpr (CL) {
        if (cluster_rank() != 0u) {  // a follower
            u32 thr_key;
            int tie_last;
            follow<Tr>(RowSource<Tr>{xrow, sxv, V, vec, fast}, scale, &thr_key, &tie_last);
            if (do_mask) mask_slice<Tr>(xrow, sxv, V, vec, fast, out + (i64)row * sob, sov, thr_key, tie_last,
                                        mask_bits, inplace, vec_out);
            return;
        }
    }
#endif
    // Slice s's partial is thread s's (S <= QRITA_NBINS <= QRITA_THREADS: the host's MAX_SPLITS);
    // integer partials, so the block's reduction is the in-order combine.  (A loop over the
    // slices in turn paid a memory latency a slice.)  The cuts are the partial kernel's (slice 0
    // computed them from the same sample): no second read of the sample here.
    const Partial mine = (int)threadIdx.x < S ? parts[(i64)row * S + threadIdx.x] : Partial{0u, 0u, 0u};
    const RowCut cut = cuts[row];
    RowParams rp = row_request(V, row, a);
    rp.cut_ok = cut.cut_ok;
    rp.cut_key = cut.cut_key;
    rp.cut2_ok = cut.cut2_ok;
    rp.cut2_key = cut.cut2_key;
    Partial t;
    t.max_key = block_allreduce(mine.max_key, OpMax(), 0u);
    t.n_keep = block_allreduce(mine.n_keep, OpSum(), 0u);
    const u32 start = block_exclusive_scan(mine.n_cand, &t.n_cand);
    if (rp.cut_ok && t.n_cand <= (u32)QRITA_CAP) {  // slices in order: the candidates in index order
        // slice s's candidates go to [start_s, start_s + n_s); bin_cnt holds the starts here (the
        // search clears the bins before its first round)
        if ((int)threadIdx.x < S) qrita_sm.bin_cnt[threadIdx.x] = start;
        __syncthreads();
        for (u32 j = threadIdx.x; j < t.n_cand; j += QRITA_THREADS) {
            int lo = 0, hi = S - 1;  // the last slice starting at or before j: not an empty one
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (qrita_sm.bin_cnt[mid] <= j) lo = mid; else hi = mid - 1;
            }
            const i64 at = ((i64)row * S + lo) * QRITA_CAP + (j - qrita_sm.bin_cnt[lo]);
            qrita_sm.cand_key[j] = cand_key[at];
            qrita_sm.cand_col[j] = cand_col[at];
        }
    }
    __syncthreads();
    rp = regather<Tr>(xrow, sxv, V, vec, rp, t);
    const RowOut o = search_row<Tr, CL>(xrow, sxv, V, vec, fast, rp, t, zpart + (i64)row * nchunks, nchunks,
                                        ties_all, scale, want_tie);
    write_row<Tr>(o, row, threshold, num_ties, count, hit);
#if QRITA_CLUSTER > 1
    if constexpr (CL) {
        lead_done(o.thr_key, o.tie_last);  // the row's reads are over: in place, it is rewritten now
        if (do_mask) mask_slice<Tr>(xrow, sxv, V, vec, fast, out + (i64)row * sob, sov, o.thr_key, o.tie_last,
                                    mask_bits, inplace, vec_out);
        return;
    }
#endif
    if (threadIdx.x == 0) {  // for mask_kernel
        info[row].thr_key = o.thr_key;
        info[row].tie_last = o.tie_last;
    }
}

// Masking from RowInfo: block (row, j) handles a slice of cols_per_block columns.
template <class Tr>
__device__ void mask_rows(const typename Tr::bits_t* x, i64 sxb, i64 sxv, int V, int vec, const RowInfo* info,
                          typename Tr::bits_t* out, i64 sob, i64 sov, u32 mask_bits, int inplace, int cols_per_block) {
    const int row = blockIdx.x;
    const int c0 = blockIdx.y * cols_per_block;
    const int c1 = c0 + cols_per_block < V ? c0 + cols_per_block : V;
    const RowInfo ri = info[row];
    mask_cols<Tr>(x + (i64)row * sxb, sxv, out + (i64)row * sob, sov, c0, c1, ri.thr_key, ri.tie_last,
                  (typename Tr::bits_t)mask_bits, inplace,
                  (vec & QRITA_VEC_IN) && (vec & QRITA_VEC_OUT) && (vec & QRITA_FAST));
}

#define QRITA_KERNELS(NAME, TR)                                                                           \
    extern "C" __global__ void QRITA_BOUNDS select_kernel_##NAME(                                         \
        const TR::bits_t* x, i64 sxb, i64 sxv, int V, int vec, i64 k_scalar, const i64* k_rows,           \
        double p_scalar, const void* p_rows, int p_kind, int truncation, int ties_all, double scale,       \
        TR::bits_t* threshold, int* num_ties, int* count, unsigned char* hit, ZPart* zpart, int do_mask,   \
        TR::bits_t* out, i64 sob, i64 sov, u32 mask_bits, int inplace) {                                  \
        RowArgs a = row_args(k_scalar, k_rows, p_scalar, p_rows, p_kind, truncation);                     \
        select_rows<TR>(x, sxb, sxv, V, vec, a, ties_all, scale, threshold, num_ties, count, hit, zpart,  \
                        do_mask, out, sob, sov, mask_bits, inplace);                                       \
    }                                                                                                     \
    extern "C" __global__ void QRITA_BOUNDS partial_kernel_##NAME(                                        \
        const TR::bits_t* x, i64 sxb, i64 sxv, int V, int vec, i64 k_scalar, const i64* k_rows,           \
        double p_scalar, const void* p_rows, int p_kind, int truncation, int S, u32* cand_key,            \
        int* cand_col, Partial* parts, ZPart* zpart, RowCut* cuts) {                                      \
        RowArgs a = row_args(k_scalar, k_rows, p_scalar, p_rows, p_kind, truncation);                     \
        partial_rows<TR>(x, sxb, sxv, V, vec, a, S, cand_key, cand_col, parts, zpart, cuts);              \
    }                                                                                                     \
    extern "C" __global__ void QRITA_BOUNDS combine_kernel_##NAME(                                        \
        const TR::bits_t* x, i64 sxb, i64 sxv, int V, int vec, i64 k_scalar, const i64* k_rows,           \
        double p_scalar, const void* p_rows, int p_kind, int truncation, int S, int ties_all, double scale,\
        const u32* cand_key, const int* cand_col, const Partial* parts, const ZPart* zpart,               \
        const RowCut* cuts, TR::bits_t* threshold, int* num_ties, int* count, unsigned char* hit,         \
        RowInfo* info, int want_tie) {                                                                    \
        RowArgs a = row_args(k_scalar, k_rows, p_scalar, p_rows, p_kind, truncation);                     \
        combine_rows<TR, false>(x, sxb, sxv, V, vec, a, S, ties_all, scale, cand_key, cand_col, parts,    \
                                zpart, cuts, threshold, num_ties, count, hit, info, want_tie, 0, nullptr, 0, 0, \
                                0u, 0);                                                                   \
    }                                                                                                     \
    extern "C" __global__ void QRITA_BOUNDS mask_kernel_##NAME(                                           \
        const TR::bits_t* x, i64 sxb, i64 sxv, int V, int vec, const RowInfo* info, TR::bits_t* out,      \
        i64 sob, i64 sov, u32 mask_bits, int inplace, int cols_per_block) {                               \
        mask_rows<TR>(x, sxb, sxv, V, vec, info, out, sob, sov, mask_bits, inplace, cols_per_block);      \
    }

// The cluster combine (sm_90+): launched with QRITA_CLUSTER blocks a row.
#if QRITA_CLUSTER > 1
#define QRITA_CLUSTER_KERNELS(NAME, TR)                                                                   \
    extern "C" __global__ void QRITA_BOUNDS __cluster_dims__(QRITA_CLUSTER, 1, 1) ccombine_kernel_##NAME( \
        const TR::bits_t* x, i64 sxb, i64 sxv, int V, int vec, i64 k_scalar, const i64* k_rows,           \
        double p_scalar, const void* p_rows, int p_kind, int truncation, int S, int ties_all, double scale,\
        const u32* cand_key, const int* cand_col, const Partial* parts, const ZPart* zpart,               \
        const RowCut* cuts, TR::bits_t* threshold, int* num_ties, int* count, unsigned char* hit,         \
        int do_mask, TR::bits_t* out, i64 sob, i64 sov, u32 mask_bits, int inplace) {                     \
        RowArgs a = row_args(k_scalar, k_rows, p_scalar, p_rows, p_kind, truncation);                     \
        combine_rows<TR, true>(x, sxb, sxv, V, vec, a, S, ties_all, scale, cand_key, cand_col, parts,     \
                               zpart, cuts, threshold, num_ties, count, hit, nullptr, do_mask, do_mask, out,    \
                               sob, sov, mask_bits, inplace);                                             \
    }
#else
#define QRITA_CLUSTER_KERNELS(NAME, TR)
#endif

// The host builds one dtype per module (-DQRITA_DTYPES_SELECTED -DQRITA_WITH_<DTYPE>).
#ifndef QRITA_DTYPES_SELECTED
#define QRITA_WITH_FLOAT32
#define QRITA_WITH_FLOAT16
#define QRITA_WITH_BFLOAT16
#endif
#ifdef QRITA_WITH_FLOAT32
QRITA_KERNELS(float32, qrita_float32)
QRITA_CLUSTER_KERNELS(float32, qrita_float32)
#endif
#ifdef QRITA_WITH_FLOAT16
QRITA_KERNELS(float16, qrita_float16)
QRITA_CLUSTER_KERNELS(float16, qrita_float16)
#endif
#ifdef QRITA_WITH_BFLOAT16
QRITA_KERNELS(bfloat16, qrita_bfloat16)
QRITA_CLUSTER_KERNELS(bfloat16, qrita_bfloat16)
#endif
