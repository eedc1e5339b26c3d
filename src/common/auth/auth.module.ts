import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserEntity } from '../../dashboard/users/user.entity';
import {
  AdminAuthGuard,
  DashboardAuthGuard,
  FamilyAuthenticator,
  GatewayAuthGuard,
  PortalAuthGuard,
} from './auth.guard';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity])],
  providers: [FamilyAuthenticator, GatewayAuthGuard, AdminAuthGuard, PortalAuthGuard, DashboardAuthGuard],
  exports: [FamilyAuthenticator, GatewayAuthGuard, AdminAuthGuard, PortalAuthGuard, DashboardAuthGuard, TypeOrmModule],
})
export class AuthModule {}
