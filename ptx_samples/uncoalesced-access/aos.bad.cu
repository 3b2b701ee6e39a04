// ptxlint: launch block=256 grid=16 param.2=4096
// Array of 32-byte structures: reading two fields makes every lane fetch its own sector.
struct Particle { float x, y, z, vx, vy, vz, mass, charge; };

extern "C" __global__ void momentum(float* px, const Particle* p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        px[i] = p[i].mass * p[i].vx;
}
// ptx-expect: ld\.global\.f32 => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=4 stride_bytes=32
