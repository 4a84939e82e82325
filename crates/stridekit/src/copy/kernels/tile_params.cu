// A multi-axis tile plan's parameters (`TileParams` in params.rs) and the base offsets of
// its tiles: shared by the tile kernels (tile_copy.cu, image_tile.cu).
struct TileParams {
    long long src_steps[8]; long long dst_steps[8];   // per grid axis, elements
    unsigned int counts[8]; unsigned int mul[8]; unsigned int sh[8];  // grid axes, FastDiv
    int ext[8]; int sstr[8]; int dstr[8]; int wgt[8];  // tile axes, destination order
    unsigned int tmul[8]; unsigned int tsh[8];         // FastDiv by each tile extent
    int sorder[8];                                     // tile axes in source order
    int nt, ng, vol; unsigned int ntiles;
    int data_bytes, pos_bytes;                          // shared-memory carve-up
    int sbase, jbase;  // offset and position of a tile's lowest source element
    int slot_shift, slot_pad;  // padding of the tile's image (`TilePlan::slot`)
};
// Source and destination offsets of tile `t`'s first element (grid axis 0 fastest).
__device__ __forceinline__ void tile_base(const TileParams& p, unsigned int t, long long& sb, long long& db) {
    unsigned int rem = t;
    sb = 0;
    db = 0;
    for (int g = 0; g < p.ng; ++g) {
        const unsigned int hi = __umulhi(rem, p.mul[g]);
        const unsigned int q = (hi + ((rem - hi) >> (p.sh[g] & 0xffu))) >> (p.sh[g] >> 8);
        const unsigned int c = rem - q * p.counts[g];
        rem = q;
        sb += (long long)c * p.src_steps[g];
        db += (long long)c * p.dst_steps[g];
    }
}
